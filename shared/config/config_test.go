package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestParsePrecedence(t *testing.T) {
	t.Setenv("STRATA_NATS_URL", "nats://env:4222")
	t.Setenv("STRATA_WORKERS", "7")
	t.Setenv("STRATA_TIMEOUT", "nonsense")
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	url := fs.String("nats-url", "nats://default", "")
	workers := fs.Int("workers", 1, "")
	bucket := fs.String("bucket", "strata", "")
	fs.Duration("timeout", time.Second, "")
	err := Parse(fs, []string{"-workers", "3"})
	if err == nil || !strings.Contains(err.Error(), "STRATA_TIMEOUT") {
		t.Fatalf("want an error naming STRATA_TIMEOUT, got %v", err)
	}
	if *url != "nats://env:4222" || *workers != 3 || *bucket != "strata" {
		t.Fatalf("url %q workers %d bucket %q", *url, *workers, *bucket)
	}
}

func TestProblemsNameTheVariable(t *testing.T) {
	var p Problems
	if p.Err() != nil {
		t.Fatal("no problems must be nil")
	}
	p.Addf("s3-endpoint", "must be host:port, got %q", "")
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "STRATA_S3_ENDPOINT") || !strings.Contains(err.Error(), "-s3-endpoint") {
		t.Fatalf("got %v", err)
	}
}

func TestValidateWeaviateHosts(t *testing.T) {
	for value, ok := range map[string]bool{
		"127.0.0.1:8080": true, "a:8080, b:8080,c:8080": true, "weaviate-0.weaviate-headless:8080": true,
		"": false, " , ": false, "a:8080,b": false, "a": false,
	} {
		var p Problems
		ValidateWeaviateHosts(&p, "weaviate-host", value)
		if (p.Err() == nil) != ok {
			t.Errorf("%q: ok=%v, got %v", value, ok, p.Err())
		}
	}
}
