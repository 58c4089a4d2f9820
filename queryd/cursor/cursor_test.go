package cursor

import (
	"errors"
	"strings"
	"testing"
)

func TestRoundTripAndTamper(t *testing.T) {
	s, err := NewSigner("0123456789abcdef-secret")
	if err != nil {
		t.Fatal(err)
	}
	pos := Position{Tool: "list_file_chunks", Project: "acme", Scope: "v1", Offset: 100, Limit: 50}
	c := s.Encode(pos)
	got, err := s.Decode(c)
	if err != nil || got != pos {
		t.Fatalf("got %+v, %v", got, err)
	}
	other, _ := NewSigner("another-secret-0123456789")
	body, sig, _ := strings.Cut(c, ".")
	forged := Position{Tool: "list_file_chunks", Project: "beta", Offset: 0, Limit: 50}
	for name, bad := range map[string]string{
		"empty":        "",
		"no signature": body,
		"flipped":      body + "." + strings.ToUpper(sig),
		"other secret": other.Encode(pos),
		"foreign body": other.Encode(forged)[:strings.Index(other.Encode(forged), ".")] + "." + sig,
		"garbage":      "%%%.###",
		"huge":         strings.Repeat("a", 5000) + "." + sig,
	} {
		if _, err := s.Decode(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := NewSigner("short"); err == nil {
		t.Fatal("short secrets must be refused")
	}
}
