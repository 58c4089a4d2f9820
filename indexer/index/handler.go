package index

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// HandleChunks applies one message of the chunks stream.
func (w *Writer) HandleChunks(ctx context.Context, msg jetstream.Msg) error {
	switch kind := msg.Headers().Get(pipeline.HeaderKind); kind {
	case pipeline.KindFileVersion:
		var fv pipeline.FileVersion
		if err := json.Unmarshal(msg.Data(), &fv); err != nil {
			return worker.Permanent(fmt.Errorf("decode file version: %w", err))
		}
		out, err := w.ApplyFileVersion(ctx, fv)
		if err != nil {
			return err
		}
		w.log.Info("file version "+string(out), "project", fv.Object.Project, "path", fv.Object.Path,
			"file_version_id", fv.FileVersionID, "status", fv.Status, "chunks", len(fv.Chunks))
	case pipeline.KindFileDeleted:
		var d pipeline.FileDeleted
		if err := json.Unmarshal(msg.Data(), &d); err != nil {
			return worker.Permanent(fmt.Errorf("decode delete: %w", err))
		}
		out, err := w.ApplyDelete(ctx, d)
		if err != nil {
			return err
		}
		w.log.Info("delete "+string(out), "project", d.Object.Project, "path", d.Object.Path, "file_id", d.FileID)
	case pipeline.KindTagsChanged:
		var ac pipeline.TagsChanged
		if err := json.Unmarshal(msg.Data(), &ac); err != nil {
			return worker.Permanent(fmt.Errorf("decode access change: %w", err))
		}
		if err := validateAccessChange(ac); err != nil {
			return worker.Permanent(err)
		}
		out, err := w.ApplyAccessChange(ctx, ac)
		if err != nil {
			return err
		}
		w.log.Info("access change "+string(out), "project", ac.Object.Project, "path", ac.Object.Path, "file_id", ac.FileID,
			"readers", ac.Access.Readers(), "read_at", ac.Access.ReadAt)
	default:
		return worker.Permanent(fmt.Errorf("unknown message kind %q on %s", kind, msg.Subject()))
	}
	return nil
}
