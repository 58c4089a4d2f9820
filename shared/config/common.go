package config

import (
	"flag"
	"strings"
	"time"
)

// Common is the configuration every Strata service has.
type Common struct {
	NATSURL   string
	HTTPAddr  string // /healthz, /readyz and /metrics
	LogLevel  string
	LogFormat string
	// TraceExporter is none (default), stdout or otlp (OTEL_EXPORTER_OTLP_ENDPOINT).
	TraceExporter string
	// RetryDelays is the backoff between attempts after a transient failure.
	RetryDelays string
	// KVReplicas is the replica count of the NATS KV buckets the service
	// creates (3 on a clustered NATS; must not exceed the cluster's size).
	KVReplicas int
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (debug.SetMemoryLimit, as GOMEMLIMIT; 0: GOMEMLIMIT or no limit),
	// set by service.Start.
	MemoryLimit int64
}

// Retries parses RetryDelays (validated by Validate).
func (c *Common) Retries() []time.Duration {
	var out []time.Duration
	for _, f := range strings.Split(c.RetryDelays, ",") {
		if d, err := time.ParseDuration(strings.TrimSpace(f)); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// MemoryLimitFlag is the flag of Common.MemoryLimit, which service.Start applies.
const MemoryLimitFlag = "memory-limit"

// RegisterFlags registers the common flags with defaults for a service whose
// health endpoint listens on httpAddr.
func (c *Common) RegisterFlags(fs *flag.FlagSet, httpAddr string) {
	fs.StringVar(&c.NATSURL, "nats-url", "nats://127.0.0.1:4222", "NATS server URL(s), comma-separated")
	fs.StringVar(&c.HTTPAddr, "http-addr", httpAddr, "address of the /healthz, /readyz and /metrics HTTP endpoint")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "json", "json or text")
	fs.StringVar(&c.TraceExporter, "trace-exporter", "none", "none, stdout or otlp (OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.IntVar(&c.KVReplicas, "kv-replicas", 1, "replicas of the NATS KV buckets this service creates (1 on a single server, 3 on a cluster)")
	fs.Int64Var(&c.MemoryLimit, MemoryLimitFlag, 0, "soft memory limit of the Go runtime in bytes (as GOMEMLIMIT: the collector works harder near it; 0: leave GOMEMLIMIT or the runtime's default)")
	fs.StringVar(&c.RetryDelays, "retry-delays", "1s,5s,30s,2m", "delays between the attempts at a message after transient failures; after the last it is dead-lettered")
}

// Validate records problems with the common flags.
func (c *Common) Validate(p *Problems) {
	if !strings.HasPrefix(c.NATSURL, "nats://") && !strings.HasPrefix(c.NATSURL, "tls://") {
		p.Addf("nats-url", "must start with nats:// or tls://, got %q", c.NATSURL)
	}
	if c.HTTPAddr == "" {
		p.Addf("http-addr", "must be host:port")
	}
	if c.MemoryLimit < 0 || (c.MemoryLimit > 0 && c.MemoryLimit < 64<<20) {
		p.Addf(MemoryLimitFlag, "must be 0 or at least 64 MiB, got %d", c.MemoryLimit)
	}
	if c.KVReplicas < 1 || c.KVReplicas > 5 {
		p.Addf("kv-replicas", "must be 1..5, got %d", c.KVReplicas)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p.Addf("log-level", "must be debug, info, warn or error, got %q", c.LogLevel)
	}
	for _, f := range strings.Split(c.RetryDelays, ",") {
		if d, err := time.ParseDuration(strings.TrimSpace(f)); err != nil || d <= 0 {
			p.Addf("retry-delays", "want positive durations separated by commas, got %q", c.RetryDelays)
			break
		}
	}
	switch c.TraceExporter {
	case "none", "stdout", "otlp":
	default:
		p.Addf("trace-exporter", "must be none, stdout or otlp, got %q", c.TraceExporter)
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		p.Addf("log-format", "must be json or text, got %q", c.LogFormat)
	}
}
