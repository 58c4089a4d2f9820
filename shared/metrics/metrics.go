// Package metrics exposes each service's Prometheus metrics, named
// strata_<stage>_<what>_<unit>.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is one service's metrics, with Go runtime and process metrics.
type Registry struct{ *prometheus.Registry }

// New returns a registry.
func New() *Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{r}
}

// Handler serves the registry at /metrics.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.Registry, promhttp.HandlerOpts{Registry: r.Registry})
}

// Stage measures a worker stage: outcomes, processing time and consumer lag.
type Stage struct {
	messages *prometheus.CounterVec
	seconds  prometheus.Histogram
	pending  prometheus.Gauge
}

// NewStage registers the metrics of stage.
func (r *Registry) NewStage(stage string) *Stage {
	s := &Stage{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_" + stage + "_messages_total",
			Help: "Messages handled, by outcome: acked, retried or dead_lettered.",
		}, []string{"outcome"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "strata_" + stage + "_processing_seconds",
			Help:    "Time to handle one message.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14), // 5 ms .. 40 s
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "strata_" + stage + "_consumer_pending_messages",
			Help: "Messages of the stage's durable consumer not yet delivered or not yet acknowledged (lag).",
		}),
	}
	r.MustRegister(s.messages, s.seconds, s.pending)
	for _, o := range []string{"acked", "retried", "dead_lettered"} {
		s.messages.WithLabelValues(o) // show zeroes before the first message
	}
	return s
}

// Observe records one handled message (worker.Observer).
func (s *Stage) Observe(outcome string, took time.Duration) {
	s.messages.WithLabelValues(outcome).Inc()
	s.seconds.Observe(took.Seconds())
}

// WatchLag updates the lag gauge from the consumer every interval until ctx ends.
func (s *Stage) WatchLag(ctx context.Context, c jetstream.Consumer, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if info, err := c.Info(ctx); err == nil {
			s.pending.Set(float64(info.NumPending) + float64(info.NumAckPending))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Freshness measures how long uploads take to become searchable.
type Freshness struct{ seconds *prometheus.HistogramVec }

// NewFreshness registers strata_upload_to_searchable_seconds.
func (r *Registry) NewFreshness() *Freshness {
	f := &Freshness{seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "strata_upload_to_searchable_seconds",
		Help: "From the bucket event's time to the commit that makes the upload findable: search=keyword at its commit, search=vector once its vectors are written.",
		// 25 ms .. 200 s: the goal is half a second; a backlog takes minutes.
		Buckets: prometheus.ExponentialBuckets(0.025, 2, 14),
	}, []string{"search"})}
	r.MustRegister(f.seconds)
	for _, s := range []string{"keyword", "vector"} {
		f.seconds.WithLabelValues(s) // show the series before the first upload
	}
	return f
}

// ObserveSearchable records one upload (index.FreshnessObserver).
func (f *Freshness) ObserveSearchable(search string, took time.Duration) {
	f.seconds.WithLabelValues(search).Observe(max(took, 0).Seconds())
}

// Outcomes counts events by outcome, with the time each took.
type Outcomes struct {
	events  *prometheus.CounterVec
	seconds prometheus.Histogram
}

// NewOutcomes registers strata_<name>_total{outcome} and
// strata_<name>_seconds, with a zero series for each outcome.
func (r *Registry) NewOutcomes(name, help string, outcomes ...string) *Outcomes {
	o := &Outcomes{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_" + name + "_total", Help: help}, []string{"outcome"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "strata_" + name + "_seconds", Help: "Time to handle one: " + help,
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
	}
	r.MustRegister(o.events, o.seconds)
	for _, out := range outcomes {
		o.events.WithLabelValues(out)
	}
	return o
}

// Observe records one event.
func (o *Outcomes) Observe(outcome string, took time.Duration) {
	o.events.WithLabelValues(outcome).Inc()
	if took > 0 {
		o.seconds.Observe(took.Seconds())
	}
}
