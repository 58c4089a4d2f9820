package index

// A file's Document as the index holds it: the file's current state,
// which every decision about an event of the file starts from.

import (
	"context"
	"errors"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// current is the stored state of a document.
type current struct {
	exists        bool
	deleted       bool
	sequencer     string
	fileVersionID string
	commitSeq     int64
	// labels are who may read the file and its metadata as the document records them (labels.go).
	labels labels
}

// document reads the Document of fileID (exists is false while it has none).
func (w *Writer) document(ctx context.Context, project, fileID string) (current, error) {
	props, err := w.object(ctx, schema.DocumentClass, project, fileID)
	if err != nil || props == nil {
		return current{}, err
	}
	return current{exists: true, deleted: props["deleted"] == true, sequencer: wvquery.Str(props, "sequencer"),
		fileVersionID: wvquery.Str(props, "file_version_id"), commitSeq: int64(wvquery.Float(props, "commit_seq")), labels: labelsOfProps(props)}, nil
}

// object reads one object of class by id: nil, and no error, when there is
// none.
func (w *Writer) object(ctx context.Context, class, project, id string) (map[string]any, error) {
	objs, err := w.wv.Data().ObjectsGetter().WithClassName(class).WithID(id).WithTenant(project).Do(ctx)
	if err != nil {
		var ce *fault.WeaviateClientError
		if errors.As(err, &ce) && ce.StatusCode == 404 {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s %s: %w", class, id, err)
	}
	if len(objs) == 0 {
		return nil, nil
	}
	props, _ := objs[0].Properties.(map[string]any)
	return props, nil
}
