package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTarget(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		args    []string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{nil, map[string]string{"STRATA_HTTP_ADDR": "0.0.0.0:8081"}, "http://127.0.0.1:8081/readyz", false},
		{[]string{"/healthz"}, map[string]string{"STRATA_HTTP_ADDR": ":8083"}, "http://127.0.0.1:8083/healthz", false},
		{[]string{"healthz"}, map[string]string{"STRATA_ADDR": "0.0.0.0:8090"}, "http://127.0.0.1:8090/healthz", false},
		{nil, map[string]string{"STRATA_ADDR": "10.0.0.5:8090"}, "http://10.0.0.5:8090/readyz", false},
		{[]string{"http://x:1/y"}, nil, "http://x:1/y", false},
		{nil, nil, "", true},
		{nil, map[string]string{"STRATA_HTTP_ADDR": "nonsense"}, "", true},
	}
	for _, tt := range tests {
		got, err := target(tt.args, env(tt.env))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("target(%v, %v) = %q, %v; want %q (error %v)", tt.args, tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			http.Error(w, "not ready: nats disconnected", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	if err := check(srv.URL+"/healthz", time.Second); err != nil {
		t.Errorf("healthy endpoint: %v", err)
	}
	if err := check(srv.URL+"/readyz", time.Second); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("unready endpoint: want a 503 error, got %v", err)
	}
	srv.Close()
	if err := check(srv.URL+"/healthz", time.Second); err == nil {
		t.Error("closed server: want an error")
	}
}
