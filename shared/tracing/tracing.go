// Package tracing follows one file through the stages: each stage's work is
// a span, and the span context travels in NATS headers (W3C traceparent),
// so a trace shows ingestor, embedder and indexer for one upload. Exporting
// is off by default.
package tracing

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Exporters that Setup accepts.
var Exporters = []string{"none", "stdout", "otlp"}

// Setup installs the global tracer provider for service. exporter is "none"
// (spans are not recorded), "stdout" (JSON on stdout, for debugging) or
// "otlp" (OTLP over HTTP; endpoint from OTEL_EXPORTER_OTLP_ENDPOINT). The
// returned function flushes and stops it.
func Setup(ctx context.Context, service, exporter string) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	var exp sdktrace.SpanExporter
	var err error
	switch exporter {
	case "", "none":
		return func(context.Context) error { return nil }, nil
	case "stdout":
		exp, err = stdouttrace.New()
	case "otlp":
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("trace exporter %q: want none, stdout or otlp", exporter)
	}
	if err != nil {
		return nil, fmt.Errorf("trace exporter %s: %w", exporter, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("strata-"+service))))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// Tracer is Strata's tracer.
func Tracer() trace.Tracer { return otel.Tracer("github.com/strata-kb/strata") }

// headerCarrier adapts NATS headers to the propagation API.
type headerCarrier nats.Header

func (c headerCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c headerCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Inject writes the span context of ctx into h.
func Inject(ctx context.Context, h nats.Header) {
	propagation.TraceContext{}.Inject(ctx, headerCarrier(h))
}

// Extract returns ctx carrying the span context found in h, if any.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if h == nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, headerCarrier(h))
}
