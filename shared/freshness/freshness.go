// Package freshness records, per uploaded object, how far its latest event
// got through the pipeline (pending, indexed, embedded, failed, deleted), in
// a NATS KV bucket that operators read with `nats kv get strata_objects <key>`.
package freshness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

// Store writes object states.
type Store struct{ kv jetstream.KeyValue }

// Open creates or opens the bucket.
func Open(ctx context.Context, js jetstream.JetStream, replicas int) (*Store, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: pipeline.ObjectStateBucket, Description: "Strata: freshness of every uploaded object",
		History: 1, Storage: jetstream.FileStorage, Replicas: replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", pipeline.ObjectStateBucket, err)
	}
	return &Store{kv: kv}, nil
}

// rank orders the states of one event: a later stage never steps back.
var rank = map[string]int{pipeline.StatePending: 1, pipeline.StateFailed: 2, pipeline.StateIndexed: 2, pipeline.StateDeleted: 2, pipeline.StateEmbedded: 3}

// Put records st unless the object already has a newer event, or the same
// event at a later stage. Concurrent writers are resolved by compare-and-set.
func (s *Store) Put(ctx context.Context, st pipeline.ObjectState) error {
	key := pipeline.ObjectStateKey(st.Project, st.Key)
	if st.UpdatedAt.IsZero() {
		st.UpdatedAt = time.Now().UTC()
	}
	return s.update(ctx, key, st.Key, func(old *pipeline.ObjectState, unreadable error) (pipeline.ObjectState, bool, error) {
		if old == nil || unreadable != nil {
			return st, true, nil // an unreadable state is replaced
		}
		next, changed := merge(*old, st)
		return next, changed, nil
	})
}

// update changes key's state (of objectKey) by compare-and-set, again
// whenever a concurrent writer changed it in between. change gets the
// recorded state (nil: none; unreadable: it could not be decoded) and
// returns the state to record and whether to record it.
func (s *Store) update(ctx context.Context, key, objectKey string, change func(old *pipeline.ObjectState, unreadable error) (pipeline.ObjectState, bool, error)) error {
	for range 10 {
		var old *pipeline.ObjectState
		var unreadable error
		cur, err := s.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("freshness %s: %w", objectKey, err)
		default:
			old = new(pipeline.ObjectState)
			unreadable = json.Unmarshal(cur.Value(), old)
		}
		next, write, err := change(old, unreadable)
		if err != nil || !write {
			return err
		}
		body, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("freshness %s: %w", objectKey, err)
		}
		if old == nil {
			_, err = s.kv.Create(ctx, key, body)
		} else {
			_, err = s.kv.Update(ctx, key, body, cur.Revision())
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("freshness %s: %w", objectKey, err)
		}
	}
	return fmt.Errorf("freshness %s: too much contention", objectKey)
}

// merge returns what to record when st arrives over old, and whether that
// differs from old. A newer event replaces an older one; within one event a
// later stage is never stepped back, and each stage keeps the first time it
// was recorded. The tags read is the later of the two whatever the event
// (laterTags).
func merge(old, st pipeline.ObjectState) (pipeline.ObjectState, bool) {
	next, changed := mergeEvent(old, st)
	next, fromSt := laterTags(next, st.TagsDigest, st.TagsReadAt)
	next, fromOld := laterTags(next, old.TagsDigest, old.TagsReadAt)
	return next, changed || fromSt || fromOld
}

func mergeEvent(old, st pipeline.ObjectState) (pipeline.ObjectState, bool) {
	switch c := pipeline.CompareSequencers(old.Sequencer, st.Sequencer); {
	case c > 0:
		return old, false // a newer event is already recorded
	case c < 0:
		return st, true
	}
	stages := old.Stages.Merge(st.Stages)
	if rank[old.State] > rank[st.State] {
		if stages == old.Stages {
			return old, false
		}
		old.Stages = stages // a later stage stays; the earlier one adds its time
		return old, true
	}
	st.Stages = stages
	return st, true
}

// laterTags returns st with the tags read (digest, readAt) if that read is
// later than the one st records, or st records none, and whether it
// changed. The index keeps the later of two reads of a file's tags on its
// document, whatever the version (pipeline.Access.ReadAt): the state keeps
// the digest of the same read, so that it says what the index holds. A
// read of an overwritten version is always earlier than the overwrite's
// own (the ingestor checks the ETag), so a newer upload's read replaces it.
func laterTags(st pipeline.ObjectState, digest string, readAt time.Time) (pipeline.ObjectState, bool) {
	if digest == "" || digest == st.TagsDigest && readAt.Equal(st.TagsReadAt) {
		return st, false
	}
	if st.TagsDigest != "" && !readAt.After(st.TagsReadAt) {
		return st, false
	}
	st.TagsDigest, st.TagsReadAt = digest, readAt
	return st, true
}

// RecordTags records that the index now holds the read of key's tags and
// user metadata whose digest is digest, read at readAt (the indexer, once
// it applied a tag change), unless the state records a later read. Nothing
// else of the state changes. An object without a state is left so: its
// upload was never seen, and the reconcile pass re-emits it anyway.
func (s *Store) RecordTags(ctx context.Context, project, objectKey, digest string, readAt time.Time) error {
	if digest == "" {
		return nil
	}
	key := pipeline.ObjectStateKey(project, objectKey)
	return s.update(ctx, key, objectKey, func(old *pipeline.ObjectState, unreadable error) (pipeline.ObjectState, bool, error) {
		switch {
		case old == nil:
			return pipeline.ObjectState{}, false, nil
		case unreadable != nil:
			return pipeline.ObjectState{}, false, fmt.Errorf("freshness %s: %w", objectKey, unreadable)
		}
		next, changed := laterTags(*old, digest, readAt)
		return next, changed, nil
	})
}

// Get returns the recorded state of an object key.
func (s *Store) Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error) {
	e, err := s.kv.Get(ctx, pipeline.ObjectStateKey(project, objectKey))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st pipeline.ObjectState
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// List calls fn for every object state recorded for project.
func (s *Store) List(ctx context.Context, project string, fn func(pipeline.ObjectState) error) error {
	keys, err := s.kv.ListKeysFiltered(ctx, project+".*")
	if err != nil {
		return fmt.Errorf("freshness list %s: %w", project, err)
	}
	var all []string // read every key first: the lister blocks if left unread
	for key := range keys.Keys() {
		all = append(all, key)
	}
	for _, key := range all {
		e, err := s.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("freshness %s: %w", key, err)
		}
		var st pipeline.ObjectState
		if json.Unmarshal(e.Value(), &st) != nil {
			continue
		}
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

// Lookup binds to the existing bucket without changing it (for readers
// such as queryd, which must not create pipeline state).
func Lookup(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, pipeline.ObjectStateBucket)
	if err != nil {
		return nil, fmt.Errorf("kv %s (created by the ingestor and indexer): %w", pipeline.ObjectStateBucket, err)
	}
	return &Store{kv: kv}, nil
}
