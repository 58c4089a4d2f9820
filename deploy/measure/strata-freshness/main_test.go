package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]string{"-sizes", "1KB,100KB,2MB,512", "-modes", "durable", "-out", ""}, "/repo", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1000, 100000, 2000000, 512}; len(c.Sizes) != 4 || c.Sizes[0] != want[0] || c.Sizes[1] != want[1] || c.Sizes[2] != want[2] || c.Sizes[3] != want[3] {
		t.Fatalf("sizes %v", c.Sizes)
	}
	if c, err := parseConfig([]string{"-access-samples", "30"}, "/repo", io.Discard); err != nil || c.AccessSamples != 30 {
		t.Fatalf("-access-samples 30: %+v %v", c.AccessSamples, err)
	}
	if len(c.Modes) != 1 || c.Modes[0] != "durable" {
		t.Fatalf("modes %v", c.Modes)
	}
	for _, bad := range [][]string{{"-sizes", "1GB"}, {"-sizes", "0"}, {"-modes", "fast"}, {"-samples", "0"}, {"-access-samples", "-1"}} {
		if _, err := parseConfig(bad, "/repo", io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestDocument(t *testing.T) {
	for _, size := range []int{1000, 100000} {
		d := document("freshtoken", size)
		if len(d) < size || len(d) > size+64 || strings.Count(d, "freshtoken") != 1 || strings.Count(d, "fresh") != 1 {
			t.Fatalf("size %d: %d bytes, token %d times", size, len(d), strings.Count(d, "freshtoken"))
		}
	}
	if document("a", 5000)[60:] == document("a", 5000)[60:] {
		t.Fatal("two documents share their filler: the embedder's cache would serve the second")
	}
}

func TestPercentile(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	if pct(l, 50) != "50 ms" || pct(l, 90) != "90 ms" || pct(l, 99) != "99 ms" || pct(nil, 50) != "-" {
		t.Fatalf("p50 %s p90 %s p99 %s", pct(l, 50), pct(l, 90), pct(l, 99))
	}
	if ms(2500*time.Millisecond) != "2.50 s" {
		t.Fatal(ms(2500 * time.Millisecond))
	}
}
