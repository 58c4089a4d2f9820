package event

import (
	"errors"
	"strings"
	"testing"
)

// A notification as MinIO's NATS target publishes it (captured from minio).
const putEvent = `{"EventName":"s3:ObjectCreated:Put","Key":"strata/acme/docs/my+guide.md","Records":[{"eventVersion":"2.0","eventSource":"minio:s3","awsRegion":"","eventTime":"2026-11-22T01:30:00.123Z","eventName":"s3:ObjectCreated:Put","userIdentity":{"principalId":"strata"},"requestParameters":{},"responseElements":{},"s3":{"s3SchemaVersion":"1.0","configurationId":"Config","bucket":{"name":"strata","ownerIdentity":{"principalId":"strata"},"arn":"arn:aws:s3:::strata"},"object":{"key":"acme%2Fdocs%2Fmy+guide.md","size":42,"eTag":"9b2cf535f27731c974343645a3985328","contentType":"text/markdown","userMetadata":{"content-type":"text/markdown"},"sequencer":"187A1B2C3D4E5F60"}},"source":{"host":"127.0.0.1","port":"","userAgent":"MinIO"}}]}`

func TestParsePut(t *testing.T) {
	rs, err := Parse([]byte(putEvent))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d records", len(rs))
	}
	r := rs[0]
	if r.Op != Put || r.Bucket != "strata" || r.Key != "acme/docs/my guide.md" || r.Size != 42 ||
		r.ETag != "9b2cf535f27731c974343645a3985328" || r.Sequencer != "187A1B2C3D4E5F60" || r.Time.IsZero() {
		t.Fatalf("%+v", r)
	}
}

// A tag change as MinIO's NATS target publishes it: inside
// s3:ObjectCreated:*, with the sequencer of the object's upload (its
// modification time, which tagging keeps).
const putTaggingEvent = `{"EventName":"s3:ObjectCreated:PutTagging","Key":"strata/acme/docs/my+guide.md","Records":[{"eventVersion":"2.0","eventSource":"minio:s3","awsRegion":"","eventTime":"2026-11-22T01:35:00.456Z","eventName":"s3:ObjectCreated:PutTagging","userIdentity":{"principalId":"strata"},"requestParameters":{"principalId":"strata","region":"","sourceIPAddress":"127.0.0.1"},"responseElements":{"x-amz-id-2":"dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8","x-amz-request-id":"187A1C0F5E6D7A21","x-minio-deployment-id":"0b3f0a52-7f5e-4f83-9a39-2fd1e8f3b7c4","x-minio-origin-endpoint":"http://127.0.0.1:9000"},"s3":{"s3SchemaVersion":"1.0","configurationId":"Config","bucket":{"name":"strata","ownerIdentity":{"principalId":"strata"},"arn":"arn:aws:s3:::strata"},"object":{"key":"acme%2Fdocs%2Fmy+guide.md","size":42,"eTag":"9b2cf535f27731c974343645a3985328","contentType":"text/markdown","userMetadata":{"content-type":"text/markdown"},"sequencer":"187A1B2C3D4E5F60"}},"source":{"host":"127.0.0.1","port":"","userAgent":"MinIO"}}]}`

func TestParseTagging(t *testing.T) {
	for _, name := range []string{PutTagging, DeleteTagging} {
		rs, err := Parse([]byte(strings.ReplaceAll(putTaggingEvent, PutTagging, name)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 {
			t.Fatalf("%d records", len(rs))
		}
		r := rs[0]
		if r.Op != Tagging || r.Name != name || r.Key != "acme/docs/my guide.md" || r.ETag != "9b2cf535f27731c974343645a3985328" ||
			r.Sequencer != "187A1B2C3D4E5F60" || r.RequestID != "187A1C0F5E6D7A21" || r.Time.IsZero() {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	// Other s3:ObjectCreated events are uploads, with or without a request id.
	rs, err := Parse([]byte(putEvent))
	if err != nil || rs[0].Op != Put || rs[0].RequestID != "" {
		t.Fatalf("put: %+v, %v", rs, err)
	}
}

func TestParseRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not json":     `{`,
		"no records":   `{"EventName":"s3:ObjectCreated:Put"}`,
		"bad escape":   `{"Records":[{"eventName":"s3:ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"a%zz","sequencer":"1"}}}]}`,
		"no sequencer": `{"Records":[{"eventName":"s3:ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"a/b"}}}]}`,
		"no key":       `{"Records":[{"eventName":"s3:ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"sequencer":"1"}}}]}`,
	} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func TestParseIgnoresOtherEvents(t *testing.T) {
	rs, err := Parse([]byte(`{"Records":[{"eventName":"s3:ObjectAccessed:Get","s3":{"bucket":{"name":"b"},"object":{"key":"a/b","sequencer":"1"}}}]}`))
	if err != nil || len(rs) != 0 {
		t.Fatalf("got %v, %v", rs, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(putEvent))
	f.Add([]byte(putTaggingEvent))
	f.Add([]byte(`{"Records":[{"eventName":"s3:ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"a/b","sequencer":"1"}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Parse(data)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error not marked malformed: %v", err)
		}
		for _, r := range rs {
			if r.Key == "" || r.Bucket == "" || r.Sequencer == "" || (r.Op != Put && r.Op != Delete && r.Op != Tagging) {
				t.Fatalf("incomplete record accepted: %+v", r)
			}
		}
	})
}
