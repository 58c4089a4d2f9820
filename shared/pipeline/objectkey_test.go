package pipeline

import "testing"

func TestObjectKeyOf(t *testing.T) {
	for data, want := range map[string]string{
		`{"object":{"key":"acme/docs/a.md","project":"acme"},"chunks":[]}`:                           "acme/docs/a.md",
		`{"EventName":"s3:ObjectCreated:Put","Records":[{"s3":{"object":{"key":"acme%2Fa+b.md"}}}]}`: "acme/a b.md",
		`{"Records":[{"s3":{"object":{"key":"%zz"}}}]}`:                                              "",
		`not json`: "",
		`{}`:       "",
	} {
		if got := ObjectKeyOf([]byte(data)); got != want {
			t.Errorf("ObjectKeyOf(%s) = %q, want %q", data, got, want)
		}
	}
}
