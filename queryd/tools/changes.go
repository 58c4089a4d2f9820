package tools

// Strata's read-your-writes, change feed and failures tools.

import (
	"context"

	"github.com/strata-kb/strata/queryd/deadletters"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/stagehealth"
)

// ObjectStates reads per-object freshness (NATS KV strata_objects).
type ObjectStates interface {
	Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error)
}

// DeadLetters reads the dead-letter stream.
type DeadLetters interface {
	Recent(ctx context.Context, max int) ([]deadletters.Letter, error)
}

// ChangeReader lists committed versions.
type ChangeReader interface {
	Committed(ctx context.Context, project, branch string, from, to int64, limit int) ([]store.Version, error)
	VersionsAt(ctx context.Context, project string, fileIDs []string, at int64) (map[string]store.Version, error)
}

// StageHealth reads the worker replicas' reports (stagehealth.Read).
type StageHealth interface {
	Stages(ctx context.Context) ([]stagehealth.Report, error)
}

// SetStageHealth makes status name the worker replicas held back by a full
// disk or their memory budget (to admins).
func (t *Tools) SetStageHealth(h StageHealth) *Tools {
	t.stages = h
	return t
}

// SetStrata enables Strata's own tools that need the index's extra reads
// and the pipeline's state (any may be nil: its tools are not served).
func (t *Tools) SetStrata(k KeywordSearcher, c ChangeReader, states ObjectStates, dead DeadLetters) *Tools {
	t.keyword, t.changes, t.states, t.dead = k, c, states, dead
	return t
}

// accessFailure is the reason shown for a document whose groups could not
// be read.
func accessFailure(reason string) string {
	return "groups not applied, readable by admins only: " + reason
}
