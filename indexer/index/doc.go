// Package index writes file versions into Weaviate as commits. Each project
// has a commit sequence; a file version (or a delete) is written with
// valid_from = S while S is not yet published, and then S is published as
// the project's watermark. Committed objects are never modified: a file's
// visible version as of sequence W is its Version with the greatest
// valid_from <= W. (Weaviate re-indexes an object on every update, so an
// object being updated can briefly drop out of filtered reads; immutable
// objects cannot.) Readers therefore see a file's old version until the
// switch and only the new one after, never both or none. Every write is an
// upsert by deterministic ID, and the event sequencer on the document keeps
// an older event from undoing a newer one. Once published, a commit closes
// the versions it replaced (valid_to, validity.go): a hint searches use to
// leave them out, never what decides a row's visibility.
//
// # A commit: one orchestrator over two layers
//
// ApplyFileVersion queues a file version and commits it together with the
// project's other versions waiting at the same moment. commit.go is the
// only orchestrator: commitGroup takes the steps in order, and each calls
// down into the layer that keeps state in NATS KV (state_kv.go: published
// sequences, intents, leases and the hold a commit keeps its lease and fence in, embedded marks, object states) or
// the one that reads and writes Weaviate (store_weaviate.go: tenants,
// Documents and objects by id, batch writes, roll-backs, the ProjectState
// mirror; readonly.go sets a full disk's read-only shards ready again) and
// comes back. A commit:
//
//  1. begins: it locks the project, in this process and across indexers
//     (the commit lease), reads the watermark, undoes what an interrupted
//     commit left (objects above the watermark are rolled back, and a lost
//     mirror write is caught up), records its intent to write the next
//     sequence and claims the project's fence;
//  2. decides, from each file's Document and the event's Version, whether
//     the event is new, stale, a duplicate, committed but without its
//     Document (the Document is written again), or torn by a Weaviate
//     crash (its objects are deleted by id, and it is committed again);
//  3. publishes: it checks the fence, writes the new versions' objects
//     (built in objects.go, written in batches), publishes the sequence by
//     compare-and-set on the fence (then the ProjectState mirror that
//     queryd reads), writes the Documents and records each object's state
//     (with the digest of the tags read the Document holds, which the
//     ingestor's reconcile pass compares with the bucket listing).
//
// A crash before publishing leaves objects above the watermark, which the
// next commit rolls back; a crash after it may leave Documents unwritten,
// which the redelivered events write (step 2).
//
// # The other jobs
//
// A delete is a commit of its own (delete.go), and so is an access change
// (access.go, which records the tags digest it applied, state_kv.go;
// labels.go is who may read a file and its metadata, metadata.go the
// metadata's range properties). Vectors are written as
// they come, outside commits (vectors.go), into the ChunkVector collection
// (vectorcollection.go); a commit finds the vectors written before it and
// gives them its readers (commitvectors.go). Objects already written are
// changed in place by merges (merge.go). Releases pin a sequence
// (releases.go); garbage collection deletes the versions no release pins
// (gc.go). handler.go reads the streams; state_kv.go keeps every state in
// NATS KV; writer.go holds the Writer and
// its configuration, filters.go the where filters and parallel.go the
// bounded fan-out.
package index
