// Package pipeline defines what the stages say to each other: the JetStream
// streams and subjects, and the messages that travel on them. Stages never
// import each other; they meet here.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Streams and subjects. MinIO publishes bucket events on ObjectEventsSubject.
const (
	ObjectsStream       = "OBJECTS"
	ObjectEventsSubject = "strata.objects.events"
	// ObjectLiveSubject carries the same bucket events at once, on plain
	// NATS (MinIO's second target, without a queue directory): no stream
	// keeps them, the durable copy on ObjectEventsSubject follows.
	ObjectLiveSubject = "strata.objects.live"
	// ReindexSubject is followed by the project: strata.reindex.acme takes a
	// ReindexRequest. It is stored in OBJECTS, so a request is never lost.
	ReindexSubject = "strata.reindex"

	ChunksStream = "CHUNKS"
	// ChunksSubject is followed by the project: strata.chunks.acme.
	ChunksSubject = "strata.chunks"

	EmbeddingsStream  = "EMBEDDINGS"
	EmbeddingsSubject = "strata.embeddings"

	DeadLetterStream = "DEADLETTER"
	// DeadLetterSubject is followed by the stage: strata.deadletter.ingestor.
	DeadLetterSubject = "strata.deadletter"
)

// Durable consumer names, one per stage and input stream.
const (
	IngestorConsumer       = "ingestor"
	IndexerChunksConsumer  = "indexer-chunks"
	IndexerVectorsConsumer = "indexer-embeddings"
	EmbedderConsumer       = "embedder"
)

// ChunksSubjectFor returns the subject a file version of project is published on.
func ChunksSubjectFor(project string) string { return ChunksSubject + "." + project }

// EmbeddingsSubjectFor returns the subject vectors of project are published on.
func EmbeddingsSubjectFor(project string) string { return EmbeddingsSubject + "." + project }

// DeadLetterSubjectFor returns the dead-letter subject of a stage.
func DeadLetterSubjectFor(stage string) string { return DeadLetterSubject + "." + stage }

// streamMaxAge is how long the streams keep a message (and BodiesBucket
// the body of one sent by reference).
const streamMaxAge = 30 * 24 * time.Hour

// StreamConfigs returns the configuration of every stream Strata uses, with
// the given replica count (1 locally, 3 in a cluster).
func StreamConfigs(replicas int) []jetstream.StreamConfig {
	base := func(name string, subjects ...string) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name:       name,
			Subjects:   subjects,
			Storage:    jetstream.FileStorage,
			Retention:  jetstream.LimitsPolicy,
			Replicas:   replicas,
			Duplicates: 10 * time.Minute, // window for Nats-Msg-Id dedupe of republished work
			MaxAge:     streamMaxAge,
		}
	}
	return []jetstream.StreamConfig{
		base(ObjectsStream, ObjectEventsSubject, ReindexSubject+".>"),
		base(ChunksStream, ChunksSubject+".>"),
		base(EmbeddingsStream, EmbeddingsSubject+".>"),
		base(DeadLetterStream, DeadLetterSubject+".>"),
	}
}

// EnsureStreams creates or updates every stream, and the object store of
// bodies sent by reference (BodiesBucket).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, replicas int) error {
	for _, cfg := range StreamConfigs(replicas) {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("create stream %s: %w", cfg.Name, err)
		}
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, BodiesConfig(replicas)); err != nil {
		return fmt.Errorf("create object store %s: %w", BodiesBucket, err)
	}
	return nil
}

// RetryDelays is the backoff between attempts after a transient failure,
// applied by the worker with NakWithDelay. (The consumer's own BackOff is not
// used: nats-server adds it to NakWithDelay's delay from the second retry on.)
var RetryDelays = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}

// MaxDeliver is how often a message is tried before it is dead-lettered.
const MaxDeliver = 5

// ConsumerConfig returns the durable pull consumer of a stage: explicit acks,
// bounded redelivery, and a bound on unacknowledged work. A worker that dies
// mid-message gets it redelivered after AckWait; live workers extend it with
// InProgress while they work.
func ConsumerConfig(name string, maxAckPending int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       name,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       time.Minute,
		MaxDeliver:    MaxDeliver,
		MaxAckPending: maxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
}

// EnsureConsumer creates or updates a stage's durable consumer on stream.
func EnsureConsumer(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := js.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("consumer %s: stream %s does not exist (run the stack set-up first): %w", cfg.Durable, stream, err)
		}
		return nil, fmt.Errorf("consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	return c, nil
}
