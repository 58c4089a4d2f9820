package auth

// The key store: API keys made and withdrawn while queryd runs (strata keys
// create/revoke), kept in a NATS KV bucket that every replica watches.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/apikeys"
	"github.com/strata-kb/strata/shared/objkey"
)

// OpenKeysBucket creates the key bucket (apikeys.Bucket), or updates it to
// replicas: whoever needs it first (queryd or strata keys create) creates it.
func OpenKeysBucket(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, apikeys.BucketConfig(replicas))
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", apikeys.Bucket, err)
	}
	return kv, nil
}

// KeyStore knows the keys of the bucket apikeys.Bucket, in memory by hash,
// and follows it with a KV watcher: a key created or revoked anywhere is
// known to every replica as soon as NATS pushes the change (milliseconds;
// no polling).
type KeyStore struct {
	log      *slog.Logger
	mu       sync.RWMutex
	keys     keyIndex
	loaded   chan struct{}
	loadOnce sync.Once
}

// NewKeyStore returns an empty store; Watch fills it.
func NewKeyStore(log *slog.Logger) *KeyStore {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &KeyStore{log: log, keys: newKeyIndex(), loaded: make(chan struct{})}
}

// Lookup implements KeyLookup. Keys are found by their SHA-256, as in Keys.
func (s *KeyStore) Lookup(key string) (Principal, bool) {
	h := sha256.Sum256([]byte(key))
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.keys.byHash[h]
	return p, ok
}

// Loaded is closed once the bucket's keys were read the first time.
func (s *KeyStore) Loaded() <-chan struct{} { return s.loaded }

// watchRetry is the pause before a failed watch is set up again.
const watchRetry = time.Second

// errReconnected ends a watch when the connection comes back.
var errReconnected = errors.New("nats reconnected")

// Watch follows apikeys.Bucket (creating it with replicas) until ctx ends.
// After a NATS reconnect the watch is set up again at once and the bucket
// read whole: the watcher's own consumer would resume too, but only once it
// missed enough heartbeats (about 20 s after a server restart, measured),
// and revocations must not wait that long. A watch that fails is set up
// again every watchRetry.
//
// While the watch is down the store keeps serving the keys it last knew
// (it does not fail closed). Keys are created and revoked through NATS, so
// while NATS is down nobody can revoke one anyway; failing closed would
// turn every NATS blip into an outage for every stored key. The cost: a
// replica cut off from a NATS that others still reach honours a revocation
// only once it is back (the full read after reconnecting drops the key).
// Keys of -api-keys are not in the store and are never affected.
func (s *KeyStore) Watch(ctx context.Context, js jetstream.JetStream, replicas int) error {
	reconnected := js.Conn().StatusChanged(nats.CONNECTED)
	defer js.Conn().RemoveStatusListener(reconnected)
	for {
		err := s.watchOnce(ctx, js, replicas, reconnected)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errReconnected) {
			s.log.Info("nats reconnected: reading the api keys again", "bucket", apikeys.Bucket)
			continue
		}
		s.log.Warn("api key watch dropped; serving the keys last known until it is back", "bucket", apikeys.Bucket, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(watchRetry):
		}
	}
}

func (s *KeyStore) watchOnce(ctx context.Context, js jetstream.JetStream, replicas int, reconnected <-chan nats.Status) error {
	kv, err := OpenKeysBucket(ctx, js, replicas)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", apikeys.Bucket, err)
	}
	defer func() { _ = w.Stop() }()
	// The initial values are gathered apart and swapped in whole at their
	// end (the nil entry): a key revoked while a previous watch was down
	// then disappears, though no delete is delivered for it.
	fresh, initial := newKeyIndex(), true
	for {
		var e jetstream.KeyValueEntry
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-reconnected:
			return errReconnected
		case u, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("watch %s: closed", apikeys.Bucket)
			}
			e = u
		}
		switch {
		case e == nil:
			s.replace(fresh)
			initial = false
		case initial:
			s.apply(fresh, e)
		default:
			s.mu.Lock()
			s.apply(s.keys, e)
			s.mu.Unlock()
		}
	}
}

// replace makes idx the known keys.
func (s *KeyStore) replace(idx keyIndex) {
	s.mu.Lock()
	s.keys = idx
	s.mu.Unlock()
	s.loadOnce.Do(func() { close(s.loaded) })
	s.log.Info("api keys loaded", "bucket", apikeys.Bucket, "keys", len(idx.byName))
}

// apply records one change of the bucket in idx: a put (re)places the
// name's key, a delete or purge withdraws it. A record that does not parse
// withdraws the name's key too (fail closed) and is logged.
func (s *KeyStore) apply(idx keyIndex, e jetstream.KeyValueEntry) {
	idx.remove(e.Key())
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	h, p, err := parseRecord(e.Key(), e.Value())
	if err != nil {
		s.log.Warn("api key record refused: the key does not authenticate", "name", e.Key(), "err", err)
		return
	}
	idx.put(e.Key(), h, p)
}

// parseRecord checks the record stored under name and returns its hash and principal.
func parseRecord(name string, value []byte) ([32]byte, Principal, error) {
	var r apikeys.Record
	var h [32]byte
	if err := json.Unmarshal(value, &r); err != nil {
		return h, Principal{}, fmt.Errorf("decode: %w", err)
	}
	if r.Name != name {
		return h, Principal{}, fmt.Errorf("record names %q, stored under %q", r.Name, name)
	}
	raw, err := hex.DecodeString(r.Hash)
	if err != nil || len(raw) != len(h) {
		return h, Principal{}, errors.New("hash is not a hex SHA-256")
	}
	copy(h[:], raw)
	if err := checkRecordGrant(r.Projects, r.Groups); err != nil {
		return h, Principal{}, err
	}
	return h, NewPrincipal(name, r.Projects, r.Groups), nil
}

// checkRecordGrant holds a record to the rules of -api-keys (ParseProjects,
// ParseGroups), element by element: a list element is one name.
func checkRecordGrant(projects, groups []string) error {
	if len(projects) == 0 {
		return errors.New("no project")
	}
	for _, p := range projects {
		if p != AllProjects && !objkey.ValidProject(p) {
			return fmt.Errorf("invalid project %q", p)
		}
	}
	for _, g := range groups {
		if g != AllGroups && !access.ValidGroup(g) {
			return fmt.Errorf("invalid group %q", g)
		}
	}
	if slices.Contains(groups, AllGroups) && len(groups) > 1 {
		return errors.New("* (all groups) stands alone")
	}
	return nil
}

// keyIndex is the keys by hash, and each name's hash to withdraw it by name.
type keyIndex struct {
	byHash map[[32]byte]Principal
	byName map[string][32]byte
}

func newKeyIndex() keyIndex {
	return keyIndex{byHash: map[[32]byte]Principal{}, byName: map[string][32]byte{}}
}

func (x keyIndex) put(name string, h [32]byte, p Principal) {
	x.byName[name] = h
	x.byHash[h] = p
}

func (x keyIndex) remove(name string) {
	h, ok := x.byName[name]
	if !ok {
		return
	}
	delete(x.byName, name)
	if x.byHash[h].KeyName == name { // another name holding the same hash keeps it
		delete(x.byHash, h)
	}
}
