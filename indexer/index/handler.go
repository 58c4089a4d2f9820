package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// HandleChunks applies one message of the chunks stream.
func (w *Writer) HandleChunks(ctx context.Context, msg jetstream.Msg) error {
	switch kind := msg.Headers().Get(pipeline.HeaderKind); kind {
	case pipeline.KindFileVersion:
		fv, err := decode[pipeline.FileVersion](msg, "file version")
		if err != nil {
			return err
		}
		out, err := w.ApplyFileVersion(ctx, fv)
		if err != nil {
			return err
		}
		w.log.Info("file version "+string(out), "project", fv.Object.Project, "path", fv.Object.Path,
			"file_version_id", fv.FileVersionID, "status", fv.Status, "chunks", len(fv.Chunks))
	case pipeline.KindFileDeleted:
		d, err := decode[pipeline.FileDeleted](msg, "delete")
		if err != nil {
			return err
		}
		out, err := w.ApplyDelete(ctx, d)
		if err != nil {
			return err
		}
		w.log.Info("delete "+string(out), "project", d.Object.Project, "path", d.Object.Path, "file_id", d.FileID)
	case pipeline.KindTagsChanged:
		ac, err := decode[pipeline.TagsChanged](msg, "access change")
		if err != nil {
			return err
		}
		if err := validateAccessChange(ac); err != nil {
			return worker.Permanent(err)
		}
		out, err := w.ApplyAccessChange(ctx, ac)
		if err != nil {
			return err
		}
		if out == Absent {
			return w.absentAccessChange(msg, ac)
		}
		w.log.Info("access change "+string(out), "project", ac.Object.Project, "path", ac.Object.Path, "file_id", ac.FileID,
			"readers", ac.Access.Readers(), "read_at", ac.Access.ReadAt)
	default:
		return worker.Permanent(fmt.Errorf("unknown message kind %q on %s", kind, msg.Subject()))
	}
	return nil
}

// decode reads a message's JSON body as a T; what names it in the error,
// which is permanent: the same body never decodes on a redelivery.
func decode[T any](msg jetstream.Msg, what string) (T, error) {
	var v T
	if err := json.Unmarshal(msg.Data(), &v); err != nil {
		return v, worker.Permanent(fmt.Errorf("decode %s: %w", what, err))
	}
	return v, nil
}

// errNoDocumentYet is why an access change of a file without a document is
// delivered again.
var errNoDocumentYet = errors.New("no document yet, retrying")

// absentAccessChange decides what becomes of an access change of a file
// the index has no document of (outcome Absent).
//
// Why not acknowledge it at once: the ingestor reads an object's tags when
// it fetches it, then extracts; a tag change made meanwhile is published
// (read later) and can reach the indexer before the file version, read
// with the old groups, is committed. Acknowledged, the change would be
// lost and the file would keep the old readers until its next tag event:
// narrowed access would never apply. So the change is retried (a
// transient error: the worker naks it with pipeline.RetryDelays, about
// 2.5 minutes over pipeline.MaxDeliver deliveries); once the file version
// is committed, the redelivery is newer than the commit's read and is
// applied as any other change.
//
// Why not dead-letter it at the last delivery: a file that still has no
// document was almost always deleted or never ingested, and has nothing
// to protect. That is no failure to page anyone about, so the last
// delivery is acknowledged and logged at Warn (the one case left, a first
// commit later than the retry window, keeps the groups its own read found;
// the warning names the file). The worker dead-letters a message failing
// at MaxDeliver and has no "give up quietly" outcome, hence the decision
// here, from the delivery count the message carries (pipeline.MaxDeliver
// is the consumer's and the indexer worker's MaxDeliver).
func (w *Writer) absentAccessChange(msg jetstream.Msg, ac pipeline.TagsChanged) error {
	meta, err := msg.Metadata()
	if err != nil || meta.NumDelivered < pipeline.MaxDeliver {
		// Without metadata (the worker rejects such messages before us) the
		// worker's own count decides: retrying is the safe side.
		return fmt.Errorf("access change of %s: %w", ac.Object.Path, errNoDocumentYet)
	}
	w.log.Warn("access change of a file that never got a document: acknowledged without effect",
		"project", ac.Object.Project, "path", ac.Object.Path, "file_id", ac.FileID,
		"readers", ac.Access.Readers(), "read_at", ac.Access.ReadAt, "delivered", meta.NumDelivered)
	return nil
}
