// Package openai is an embedding provider for any OpenAI-compatible
// embeddings endpoint: OpenAI itself, Azure OpenAI, Ollama, vLLM,
// Hugging Face TEI, LM Studio and similar servers that accept
//
//	POST {base}/v1/embeddings
//	{"model": "...", "input": ["...", ...], "encoding_format": "float"}
//
// and answer with {"data": [{"index": i, "embedding": [...]}, ...]}.
//
// A Client satisfies the engine.Provider interface structurally (this package
// does not import engine, so engine can import it). It splits input into
// batches bounded by both a text count and an encoded request size, retries
// rate limits (429), server errors (5xx) and network failures with jittered
// exponential backoff that honours Retry-After, and checks every response:
// one vector per input, ordered by the server's index field, each of exactly
// the configured dimension and made of finite numbers.
//
// A Client is immutable after New and safe for concurrent use.
package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults applied by New to zero-valued Config fields.
const (
	DefaultBatchSize       = 64
	MaxBatchSize           = 2048 // OpenAI's limit on inputs per request
	DefaultMaxRequestBytes = 1 << 20
	DefaultMaxRetries      = 5
	DefaultTimeout         = 30 * time.Second
	DefaultInitialBackoff  = 200 * time.Millisecond
	DefaultMaxBackoff      = 10 * time.Second
	DefaultAzureAPIVersion = "2024-02-01"

	// maxRetryAfter is the longest server-requested wait (Retry-After) we
	// are willing to sleep through; a longer request fails the batch instead
	// of stalling the pipeline.
	maxRetryAfter = 60 * time.Second
	// maxErrorMessage bounds how much of a server's error text ends up in
	// our errors.
	maxErrorMessage = 300
)

// ErrTextTooLarge is wrapped by Embed when a single text cannot fit in one
// request of Config.MaxRequestBytes. Texts are never truncated silently.
var ErrTextTooLarge = errors.New("text too large for one embeddings request")

// Config configures a Client. Zero values of the optional fields take the
// defaults documented on each field.
type Config struct {
	// BaseURL is the server root, with or without the "/v1" suffix:
	// "https://api.openai.com", "https://api.openai.com/v1",
	// "http://localhost:11434/v1". A URL already ending in "/embeddings" is
	// used as is. With Azure it is the resource endpoint,
	// "https://{resource}.openai.azure.com". Required; http or https.
	BaseURL string
	// Model is the model name sent in requests; with Azure it is the
	// deployment name. Required.
	Model string
	// APIKey is sent as "Authorization: Bearer ..." (Azure: "api-key"
	// header). Optional: local servers usually need none. It never appears
	// in errors.
	APIKey string
	// Dimensions is the length of every vector. Required (>= 1): the vector
	// index must know it before the first document is embedded, and every
	// response is checked against it.
	Dimensions int
	// SendDimensions adds "dimensions": Dimensions to each request, asking
	// the model to shorten its vectors (OpenAI text-embedding-3-*). Off by
	// default because many servers reject the field.
	SendDimensions bool
	// BatchSize is the most texts per request, 1..2048; default 64.
	BatchSize int
	// MaxRequestBytes bounds the JSON request body; default 1 MiB. Batches
	// are cut early to stay below it, and a single text that cannot fit is
	// an error wrapping ErrTextTooLarge.
	MaxRequestBytes int
	// MaxRetries is how many times a request is retried after a 408, 429,
	// 5xx or network error; default 5. Negative disables retries.
	MaxRetries int
	// Timeout bounds each HTTP attempt (not the whole Embed call, which the
	// caller's context bounds); default 30s.
	Timeout time.Duration
	// InitialBackoff and MaxBackoff shape the retry delays: attempt n waits
	// a jittered InitialBackoff*2^n capped at MaxBackoff, unless the server
	// sent Retry-After. Defaults 200ms and 10s.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// Azure selects Azure OpenAI: the URL becomes
	// {BaseURL}/openai/deployments/{Model}/embeddings?api-version={APIVersion}
	// and the key goes in the "api-key" header.
	Azure bool
	// APIVersion is Azure's api-version query parameter; default
	// "2024-02-01". Ignored unless Azure is set.
	APIVersion string
	// HTTPClient sends the requests; default a client using
	// http.DefaultTransport. Its own Timeout, if any, also applies.
	HTTPClient *http.Client
}

// Validate reports every problem with c at once (joined with errors.Join),
// or nil. Zero values of optional fields are valid and mean "default".
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if strings.TrimSpace(c.BaseURL) == "" {
		add("BaseURL is required")
	} else if u, err := url.Parse(c.BaseURL); err != nil {
		add("BaseURL is not a valid URL") // not echoed: it may hold credentials
	} else {
		if u.Scheme != "http" && u.Scheme != "https" {
			add("BaseURL %q must be an http:// or https:// URL", u.Redacted())
		}
		if u.Host == "" {
			add("BaseURL %q has no host", u.Redacted())
		}
		if u.RawQuery != "" || u.Fragment != "" {
			add("BaseURL %q must not contain a query or fragment", u.Redacted())
		}
	}
	if strings.TrimSpace(c.Model) == "" {
		add("Model is required")
	}
	if c.Dimensions < 1 {
		add("Dimensions must be >= 1 (got %d): the vector dimension must be known up front", c.Dimensions)
	}
	if c.BatchSize < 0 || c.BatchSize > MaxBatchSize {
		add("BatchSize must be between 1 and %d (got %d; 0 means %d)", MaxBatchSize, c.BatchSize, DefaultBatchSize)
	}
	if c.MaxRequestBytes < 0 {
		add("MaxRequestBytes must not be negative (got %d; 0 means %d)", c.MaxRequestBytes, DefaultMaxRequestBytes)
	}
	if c.Timeout < 0 {
		add("Timeout must not be negative (got %s)", c.Timeout)
	}
	if c.InitialBackoff < 0 {
		add("InitialBackoff must not be negative (got %s)", c.InitialBackoff)
	}
	if c.MaxBackoff < 0 {
		add("MaxBackoff must not be negative (got %s)", c.MaxBackoff)
	}
	if c.APIKey != "" && strings.IndexFunc(c.APIKey, func(r rune) bool {
		return r <= ' ' || r == 0x7f
	}) >= 0 {
		// Never echo the key itself.
		add("APIKey contains whitespace or control characters (a trailing newline from a file?)")
	}
	if c.Azure && strings.ContainsAny(c.APIVersion, "&#? ") {
		add("APIVersion %q is not a valid api-version value", c.APIVersion)
	}
	return errors.Join(errs...)
}

// Client embeds texts through an OpenAI-compatible endpoint. Create it with
// New; it is safe for concurrent use.
type Client struct {
	cfg      Config // with defaults applied
	endpoint string
	http     *http.Client
	prefix   []byte // request body up to and including `"input":[`
	suffix   []byte // request body from `]` to the end
	// sleep waits d or until ctx is done; replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error
	// now is the clock used for HTTP-date Retry-After values.
	now func() time.Time
}

// New validates cfg, applies defaults and returns a Client.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("openai embeddings config: %w", err)
	}
	// A zero setting takes its default; negative retries mean none.
	cfg.BatchSize = cmp.Or(cfg.BatchSize, DefaultBatchSize)
	cfg.MaxRequestBytes = cmp.Or(cfg.MaxRequestBytes, DefaultMaxRequestBytes)
	cfg.MaxRetries = max(0, cmp.Or(cfg.MaxRetries, DefaultMaxRetries))
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.InitialBackoff = cmp.Or(cfg.InitialBackoff, DefaultInitialBackoff)
	cfg.MaxBackoff = max(cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff), cfg.InitialBackoff)
	if cfg.Azure {
		cfg.APIVersion = cmp.Or(cfg.APIVersion, DefaultAzureAPIVersion)
	}
	hc := cmp.Or(cfg.HTTPClient, &http.Client{})

	c := &Client{
		cfg:      cfg,
		endpoint: endpointURL(cfg),
		http:     hc,
		sleep:    sleepCtx,
		now:      time.Now,
	}
	c.prefix = append(append([]byte(`{"model":`), encodeJSONString(cfg.Model)...), `,"input":[`...)
	c.suffix = []byte(`]`)
	if cfg.SendDimensions {
		c.suffix = append(c.suffix, `,"dimensions":`+strconv.Itoa(cfg.Dimensions)...)
	}
	c.suffix = append(c.suffix, `,"encoding_format":"float"}`...)
	return c, nil
}

// endpointURL derives the embeddings URL from a validated config.
func endpointURL(cfg Config) string {
	u, _ := url.Parse(cfg.BaseURL) // validated
	path := strings.TrimRight(u.Path, "/")
	if cfg.Azure {
		path = strings.TrimSuffix(path, "/openai")
		u.Path = path + "/openai/deployments/" + cfg.Model + "/embeddings"
		u.RawPath = ""
		u.RawQuery = url.Values{"api-version": {cfg.APIVersion}}.Encode()
		return u.String()
	}
	switch {
	case strings.HasSuffix(path, "/embeddings"):
	case strings.HasSuffix(path, "/v1"):
		path += "/embeddings"
	default:
		path += "/v1/embeddings"
	}
	u.Path = path
	u.RawPath = ""
	return u.String()
}

// Model names the model and dimension, e.g. "openai:text-embedding-3-small:1536",
// so vectors of different models or dimensions never mix.
func (c *Client) Model() string {
	return "openai:" + c.cfg.Model + ":" + strconv.Itoa(c.cfg.Dimensions)
}

// Dimensions is the length of every vector Embed returns.
func (c *Client) Dimensions() int { return c.cfg.Dimensions }

// Endpoint is the URL requests are sent to (no credentials in it).
func (c *Client) Endpoint() string { return c.endpoint }

// Embed returns one vector per text, in order. An empty texts slice makes no
// request. All batches are planned before the first request, so a text too
// large for MaxRequestBytes fails without any network traffic.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	encoded := make([][]byte, len(texts))
	for i, t := range texts {
		encoded[i] = encodeJSONString(t)
	}
	batches, err := c.plan(texts, encoded)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(texts))
	for i, b := range batches {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embeddings %s batch %d: %w", c.cfg.Model, i, err)
		}
		vecs, err := c.embedBatch(ctx, c.body(encoded[b.start:b.end]), b.end-b.start)
		if err != nil {
			return nil, fmt.Errorf("embeddings %s batch %d: %w", c.cfg.Model, i, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type span struct{ start, end int }

// plan cuts the encoded texts into batches of at most BatchSize texts whose
// request body stays within MaxRequestBytes.
func (c *Client) plan(texts []string, encoded [][]byte) ([]span, error) {
	overhead := len(c.prefix) + len(c.suffix)
	var (
		batches []span
		start   int
		size    = overhead
	)
	for i, e := range encoded {
		if overhead+len(e) > c.cfg.MaxRequestBytes {
			return nil, fmt.Errorf("embeddings %s: text %d is %d bytes (%d as a request) but MaxRequestBytes is %d; split it before embedding: %w",
				c.cfg.Model, i, len(texts[i]), overhead+len(e), c.cfg.MaxRequestBytes, ErrTextTooLarge)
		}
		n := i - start
		add := len(e)
		if n > 0 {
			add++ // comma
		}
		if n > 0 && (n == c.cfg.BatchSize || size+add > c.cfg.MaxRequestBytes) {
			batches = append(batches, span{start, i})
			start, size, add = i, overhead, len(e)
		}
		size += add
	}
	return append(batches, span{start, len(encoded)}), nil
}

// body assembles the request JSON from pre-encoded input strings.
func (c *Client) body(inputs [][]byte) []byte {
	n := len(c.prefix) + len(c.suffix) + len(inputs)
	for _, in := range inputs {
		n += len(in)
	}
	b := make([]byte, 0, n)
	b = append(b, c.prefix...)
	for i, in := range inputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, in...)
	}
	return append(b, c.suffix...)
}

// embedBatch sends one request, retrying transient failures.
func (c *Client) embedBatch(ctx context.Context, body []byte, n int) ([][]float32, error) {
	for attempt := 0; ; attempt++ {
		vecs, retryable, wait, err := c.attempt(ctx, body, n)
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, ctxError(ctx, err)
		}
		if !retryable {
			return nil, err
		}
		if attempt >= c.cfg.MaxRetries {
			return nil, fmt.Errorf("giving up after %d attempts: %w", attempt+1, err)
		}
		if wait < 0 {
			wait = c.backoff(attempt)
		} else if wait > maxRetryAfter {
			return nil, fmt.Errorf("server asked to retry after %s (more than %s), giving up: %w", wait, maxRetryAfter, err)
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, ctxError(ctx, err)
		}
	}
}

// ctxError reports that ctx ended, keeping the last request error for
// context; errors.Is(err, context.Canceled/DeadlineExceeded) holds.
func ctxError(ctx context.Context, last error) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctx.Err()
	}
	if last == nil || errors.Is(last, cause) {
		return cause
	}
	return fmt.Errorf("%w (last error: %v)", cause, last)
}

// backoff is the jittered delay before retry number attempt+1: a random
// duration in [d/2, d] with d = InitialBackoff*2^attempt capped at MaxBackoff.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.MaxBackoff
	if attempt < 30 {
		if e := c.cfg.InitialBackoff << attempt; e > 0 && e < d {
			d = e
		}
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// attempt makes one HTTP request. On failure it says whether a retry may
// help and how long the server asked us to wait (-1: not specified).
func (c *Client) attempt(ctx context.Context, body []byte, n int) (vecs [][]float32, retryable bool, wait time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, false, -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		if c.cfg.Azure {
			req.Header.Set("api-key", c.cfg.APIKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, true, -1, fmt.Errorf("request timed out after %s", c.cfg.Timeout)
		}
		return nil, true, -1, c.redact(err)
	}
	defer resp.Body.Close()

	// Generous bound on a well-formed answer; stops a runaway server.
	limit := int64(1<<20) + int64(n)*int64(c.cfg.Dimensions)*40
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, true, -1, fmt.Errorf("reading response timed out after %s", c.cfg.Timeout)
		}
		return nil, true, -1, fmt.Errorf("reading response (status %d): %w", resp.StatusCode, c.redact(err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := &APIError{StatusCode: resp.StatusCode, Message: c.errorMessage(data)}
		retryable := resp.StatusCode == http.StatusTooManyRequests ||
			resp.StatusCode == http.StatusRequestTimeout ||
			resp.StatusCode >= 500
		wait := time.Duration(-1)
		if retryable {
			wait = retryAfter(resp.Header, c.now())
		}
		return nil, retryable, wait, apiErr
	}
	if int64(len(data)) > limit {
		return nil, false, -1, fmt.Errorf("response larger than %d bytes", limit)
	}
	vecs, err = c.parse(data, n)
	return vecs, false, -1, err
}

// APIError is a non-2xx answer from the server.
type APIError struct {
	StatusCode int
	// Message is the server's error message (truncated, API key redacted).
	Message string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// errorMessage extracts a human-readable message from an error body in
// OpenAI's {"error":{"message":...}} form, the {"error":"..."} form of
// Ollama/TEI, {"message":...}, or plain text.
func (c *Client) errorMessage(body []byte) string {
	var msg string
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var str string
		switch {
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &str) == nil && str != "":
			msg = str
		case v.Message != "":
			msg = v.Message
		case len(v.Detail) > 0 && json.Unmarshal(v.Detail, &str) == nil && str != "":
			msg = str
		}
	}
	if msg == "" {
		msg = string(body)
	}
	msg = strings.Join(strings.Fields(c.redactString(msg)), " ")
	return truncate(msg, maxErrorMessage)
}

// truncate shortens s to at most max bytes on a UTF-8 boundary.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func (c *Client) redactString(s string) string {
	if c.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.APIKey, "[REDACTED]")
}

// redact makes sure a transport error cannot carry the API key.
func (c *Client) redact(err error) error {
	if c.cfg.APIKey == "" || !strings.Contains(err.Error(), c.cfg.APIKey) {
		return err
	}
	return errors.New(c.redactString(err.Error()))
}

// retryAfter reads Retry-After (delay-seconds or HTTP-date) or OpenAI's
// retry-after-ms; -1 when absent or unparseable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return -1
		}
		if secs > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
		return 0
	}
	return -1
}

type response struct {
	Data []struct {
		Index     *int   `json:"index"`
		Embedding vector `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// parse decodes and checks a success response for n inputs.
func (c *Client) parse(data []byte, n int) ([][]float32, error) {
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding response: %w", err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("model %s returned %d embeddings for %d inputs", c.cfg.Model, len(r.Data), n)
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		idx := pos
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n {
			return nil, fmt.Errorf("model %s returned embedding index %d for %d inputs", c.cfg.Model, idx, n)
		}
		if out[idx] != nil {
			return nil, fmt.Errorf("model %s returned embedding index %d twice", c.cfg.Model, idx)
		}
		if d.Embedding == nil {
			return nil, fmt.Errorf("model %s returned no embedding for input %d", c.cfg.Model, idx)
		}
		if len(d.Embedding) != c.cfg.Dimensions {
			return nil, fmt.Errorf("model %s returned %d-d vectors, configured dimensions %d", c.cfg.Model, len(d.Embedding), c.cfg.Dimensions)
		}
		out[idx] = d.Embedding
	}
	return out, nil
}

// vector decodes an embedding given as a JSON array of numbers, or as a
// base64 string of little-endian float32s (encoding_format "base64", which
// some servers use regardless of the request). Non-numbers, nulls and
// values that overflow float32 are errors rather than silent zeros.
type vector []float32

func (v *vector) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*v = nil
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(raw)%4 != 0 {
			return errors.New("embedding is a string but not base64-encoded float32s")
		}
		out := make([]float32, len(raw)/4)
		for i := range out {
			f := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return fmt.Errorf("embedding element %d is not finite", i)
			}
			out[i] = f
		}
		*v = out
		return nil
	case b[0] != '[' || b[len(b)-1] != ']':
		return fmt.Errorf("embedding is not an array of numbers")
	}
	inner := bytes.TrimSpace(b[1 : len(b)-1])
	if len(inner) == 0 {
		*v = vector{}
		return nil
	}
	// b is valid JSON (checked by the caller's decoder). Numbers contain no
	// commas, so splitting on commas yields the elements as long as they
	// are all numbers; the first non-number element fails the check below
	// before any of its own inner pieces are looked at.
	out := make([]float32, 0, bytes.Count(inner, []byte{','})+1)
	for i := 0; len(inner) > 0; i++ {
		var tok []byte
		if j := bytes.IndexByte(inner, ','); j >= 0 {
			tok, inner = bytes.TrimSpace(inner[:j]), inner[j+1:]
		} else {
			tok, inner = bytes.TrimSpace(inner), nil
		}
		if len(tok) == 0 || (tok[0] != '-' && (tok[0] < '0' || tok[0] > '9')) {
			return fmt.Errorf("embedding element %d is not a number: %s", i, truncate(string(tok), 20))
		}
		f, err := strconv.ParseFloat(string(tok), 32)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("embedding element %d is not a finite float32: %s", i, truncate(string(tok), 20))
		}
		out = append(out, float32(f))
	}
	*v = out
	return nil
}

// encodeJSONString returns s as a JSON string literal (HTML characters left
// unescaped to keep requests small). Invalid UTF-8 becomes U+FFFD.
func encodeJSONString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}
