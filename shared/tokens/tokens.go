// Package tokens counts tokens with a real BPE tokenizer (cl100k_base, the
// encoding of OpenAI's embedding models), loaded from data compiled into the
// binary so nothing is downloaded at run time.
package tokens

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the tokenizer's encoding name.
const Encoding = "cl100k_base"

var (
	once    sync.Once
	enc     *tiktoken.Tiktoken
	loadErr error
)

func load() (*tiktoken.Tiktoken, error) {
	once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		enc, loadErr = tiktoken.GetEncoding(Encoding)
		if loadErr != nil {
			loadErr = fmt.Errorf("load tokenizer %s: %w", Encoding, loadErr)
		}
	})
	return enc, loadErr
}

// Counter counts tokens.
type Counter struct{ enc *tiktoken.Tiktoken }

// New loads the tokenizer (once per process).
func New() (*Counter, error) {
	e, err := load()
	if err != nil {
		return nil, err
	}
	return &Counter{enc: e}, nil
}

// Count returns the number of tokens in s.
func (c *Counter) Count(s string) int {
	if s == "" {
		return 0
	}
	return len(c.enc.EncodeOrdinary(s))
}
