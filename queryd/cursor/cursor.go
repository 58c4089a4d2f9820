// Package cursor makes opaque, signed pagination cursors. A cursor carries its
// position and what it is pinned to; the HMAC makes a tampered or foreign
// cursor fail with a clear error instead of reading something else.
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is returned for cursors that were not issued by this service
// with the same secret, or were altered.
var ErrInvalid = errors.New("invalid cursor: it was altered or issued elsewhere; start again without a cursor")

// Position is what a cursor encodes.
type Position struct {
	Tool    string `json:"t"`           // the tool that issued it
	Project string `json:"p"`           // the project it reads
	Scope   string `json:"s,omitempty"` // what it is pinned to (e.g. a file version)
	Offset  int    `json:"o"`
	Limit   int    `json:"l"`
	// After is the last key a keyset page ended at (list_documents: a path).
	After string `json:"a,omitempty"`
}

// Signer issues and verifies cursors.
type Signer struct{ secret []byte }

// NewSigner returns a Signer; every queryd replica must share the secret.
func NewSigner(secret string) (*Signer, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("cursor secret must be at least 16 characters")
	}
	return &Signer{secret: []byte(secret)}, nil
}

// Encode returns the cursor for pos.
func (s *Signer) Encode(pos Position) string {
	body, _ := json.Marshal(pos)
	b := base64.RawURLEncoding.EncodeToString(body)
	return b + "." + base64.RawURLEncoding.EncodeToString(s.mac(b))
}

// Decode verifies a cursor and returns its position.
func (s *Signer) Decode(c string) (Position, error) {
	b, sig, ok := strings.Cut(c, ".")
	if !ok || len(c) > 4096 {
		return Position{}, ErrInvalid
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(b)) {
		return Position{}, ErrInvalid
	}
	body, err := base64.RawURLEncoding.DecodeString(b)
	if err != nil {
		return Position{}, ErrInvalid
	}
	var pos Position
	if err := json.Unmarshal(body, &pos); err != nil || pos.Offset < 0 || pos.Limit < 1 {
		return Position{}, ErrInvalid
	}
	return pos, nil
}

func (s *Signer) mac(b string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(b))
	return m.Sum(nil)
}
