package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// TestKeyProxyKeepsAnAnswerThatStartsBeforeItsRequestEnds holds the
// conformance test's proxy to copying whole answers when the server starts
// answering before the proxy's transport has finished with the request's
// body, the race behind tools-list's one "terminated" (golang/go#40747): here
// the server answers at once and reads the body after, and the client sends
// the body once the answer has started. Without full duplex in the proxy,
// its server drains and closes the body while its transport still reads it,
// and the answer is cut.
func TestKeyProxyKeepsAnAnswerThatStartsBeforeItsRequestEnds(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("upstream: full duplex: %v", err)
		}
		fmt.Fprintf(w, "first %s\n", r.Header.Get("Authorization"))
		w.(http.Flusher).Flush()
		body, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "body %q %v\nlast\n", body, err)
	}))
	defer upstream.Close()
	endpoint, err := url.Parse(keyProxy(t, upstream.URL+"/mcp", "k"))
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	for i := range rounds {
		conn, err := net.Dial("tcp", endpoint.Host)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n\r\n", endpoint.Host)
		// The body follows once the server's answer has started.
		time.Sleep(20 * time.Millisecond)
		_, _ = conn.Write([]byte("hello"))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			conn.Close()
			t.Fatalf("round %d: no answer: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		conn.Close()
		want := "first Bearer k\nbody \"hello\" <nil>\nlast\n"
		if err != nil || string(got) != want {
			t.Fatalf("round %d of %d: the answer was cut: %q, %v (want %q)", i, rounds, got, err, want)
		}
	}
}
