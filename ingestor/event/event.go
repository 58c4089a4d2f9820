// Package event decodes MinIO/S3 bucket notifications as MinIO publishes them
// on NATS JetStream.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Op is what happened to an object.
type Op int

const (
	Put Op = iota + 1
	Delete
	// Tagging is a change of an object's tags: no new version, no new
	// content. MinIO announces it inside s3:ObjectCreated:*.
	Tagging
)

func (o Op) String() string {
	switch o {
	case Put:
		return "put"
	case Delete:
		return "delete"
	case Tagging:
		return "tagging"
	}
	return "unknown"
}

// Record is one object event.
type Record struct {
	Op          Op
	Name        string // e.g. s3:ObjectCreated:Put
	Bucket      string
	Key         string // decoded object key
	Size        int64
	ETag        string
	VersionID   string
	Sequencer   string
	ContentType string
	Time        time.Time
	// RequestID is the S3 request that caused the event ("" if not sent):
	// both copies of one event carry it, two tag changes of one version
	// (same sequencer, MinIO's is the object's modification time) do not.
	RequestID string
}

// ErrMalformed is wrapped by every decoding failure: such messages can never succeed.
var ErrMalformed = errors.New("malformed bucket event")

type notification struct {
	EventName string `json:"EventName"`
	Records   []struct {
		EventName        string `json:"eventName"`
		EventTime        string `json:"eventTime"`
		ResponseElements struct {
			RequestID string `json:"x-amz-request-id"`
		} `json:"responseElements"`
		S3 struct {
			Bucket struct {
				Name string `json:"name"`
			} `json:"bucket"`
			Object struct {
				Key         string `json:"key"`
				Size        int64  `json:"size"`
				ETag        string `json:"eTag"`
				ContentType string `json:"contentType"`
				VersionID   string `json:"versionId"`
				Sequencer   string `json:"sequencer"`
			} `json:"object"`
		} `json:"s3"`
	} `json:"Records"`
}

// Tag change events: MinIO sends them inside s3:ObjectCreated:*, though
// they make no new object version.
const (
	PutTagging    = "s3:ObjectCreated:PutTagging"
	DeleteTagging = "s3:ObjectCreated:DeleteTagging"
)

// Parse decodes a notification. Events other than object create/remove
// (e.g. s3:ObjectAccessed) return no records and no error.
func Parse(data []byte) ([]Record, error) {
	var n notification
	if err := json.Unmarshal(data, &n); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(n.Records) == 0 {
		return nil, fmt.Errorf("%w: no records (event %q)", ErrMalformed, n.EventName)
	}
	var out []Record
	for i, r := range n.Records {
		var op Op
		switch {
		case r.EventName == PutTagging, r.EventName == DeleteTagging:
			op = Tagging
		case strings.HasPrefix(r.EventName, "s3:ObjectCreated:"):
			op = Put
		case strings.HasPrefix(r.EventName, "s3:ObjectRemoved:"):
			op = Delete
		default:
			continue
		}
		// MinIO and S3 send the key form-encoded (spaces as '+', '/' as %2F).
		key, err := url.QueryUnescape(r.S3.Object.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d key %q: %v", ErrMalformed, i, r.S3.Object.Key, err)
		}
		if r.S3.Bucket.Name == "" || key == "" {
			return nil, fmt.Errorf("%w: record %d has no bucket or key", ErrMalformed, i)
		}
		if r.S3.Object.Sequencer == "" {
			return nil, fmt.Errorf("%w: record %d (%s) has no sequencer", ErrMalformed, i, key)
		}
		t, _ := time.Parse(time.RFC3339Nano, r.EventTime)
		out = append(out, Record{
			Op: op, Name: r.EventName, Bucket: r.S3.Bucket.Name, Key: key,
			Size: r.S3.Object.Size, ETag: strings.Trim(r.S3.Object.ETag, `"`), VersionID: r.S3.Object.VersionID,
			Sequencer: r.S3.Object.Sequencer, ContentType: r.S3.Object.ContentType, Time: t,
			RequestID: r.ResponseElements.RequestID,
		})
	}
	return out, nil
}
