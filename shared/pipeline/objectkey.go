package pipeline

import (
	"encoding/json"
	"net/url"
	"strings"
)

// ObjectKeyOf finds the bucket key in a pipeline message: a file version or
// delete ({"object":{"key"}}), vectors (the same), or a MinIO event.
func ObjectKeyOf(data []byte) string {
	var msg struct {
		Object struct {
			Key string `json:"key"`
		} `json:"object"`
		Records []struct {
			S3 struct {
				Object struct {
					Key string `json:"key"`
				} `json:"object"`
			} `json:"s3"`
		} `json:"Records"`
	}
	if json.Unmarshal(data, &msg) != nil {
		return ""
	}
	if msg.Object.Key != "" {
		return msg.Object.Key
	}
	if len(msg.Records) > 0 {
		k, err := url.QueryUnescape(msg.Records[0].S3.Object.Key)
		if err == nil {
			return strings.TrimPrefix(k, "/")
		}
	}
	return ""
}
