package mcphttp

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// parsedCall is what the transport reads of a request body.
type parsedCall struct {
	method      string
	name        string // params.name
	metaVersion string // params._meta's protocol version
}

// Members whose names parseCall reads. mcp-go decodes bodies with
// encoding/json, which matches struct fields without regard to case (and
// takes the last of duplicate members); a body with a member that only
// matches one of these that way, or with two of one, is not read here and
// goes to mcp-go. _meta is decoded into a map, whose keys match exactly.
var (
	envelopeMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsMembers   = []string{"name", "_meta"}
)

// maxDepth bounds the nesting parseCall follows; deeper bodies go to mcp-go.
const maxDepth = 64

// parseCall reads a JSON-RPC request in one pass over its bytes, checking
// that the whole body is one valid JSON value: an object with "jsonrpc":
// "2.0", a string or number id, a string method, no result or error, and
// params that are an object with an optional string name and an optional
// _meta (null or an object whose protocol version, when there, is a
// string). ok is false for any other body, and for any body mcp-go might
// read differently: members matching a read one only without regard to
// case, duplicates, escapes in what is read, invalid UTF-8 in strings.
func parseCall(body []byte) (c parsedCall, ok bool) {
	s := scanner{b: body}
	s.ws()
	if !s.consume('{') {
		return c, false
	}
	var seen [6]bool // envelopeMembers
	valid := s.members(false, func(key []byte) bool {
		i := indexOf(key, envelopeMembers)
		if i < 0 {
			return !looksLike(string(key), envelopeMembers) && s.value(0)
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		switch envelopeMembers[i] {
		case "jsonrpc":
			v, ok := s.plainString()
			return ok && v == mcp.JSONRPC_VERSION
		case "id":
			s.ws()
			if s.peek() == '"' {
				_, _, ok := s.str()
				return ok
			}
			return s.integerID()
		case "method":
			var ok bool
			c.method, ok = s.plainString()
			return ok
		case "params":
			return s.params(&c)
		}
		return false // result, error
	})
	if !valid {
		return c, false
	}
	s.ws()
	return c, s.i == len(s.b) && seen[0] && seen[1]
}

func (s *scanner) params(c *parsedCall) bool {
	s.ws()
	if !s.consume('{') {
		return false
	}
	var seen [2]bool // paramsMembers
	return s.members(false, func(key []byte) bool {
		i := indexOf(key, paramsMembers)
		if i < 0 {
			return !looksLike(string(key), paramsMembers) && s.value(1)
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		if i == 0 { // name
			var ok bool
			c.name, ok = s.plainString()
			return ok
		}
		return s.meta(c)
	})
}

// meta reads _meta: null, or an object (mcp-go decodes it into a map).
func (s *scanner) meta(c *parsedCall) bool {
	s.ws()
	if s.literal("null") {
		return true
	}
	if !s.consume('{') {
		return false
	}
	version := false
	return s.members(false, func(key []byte) bool {
		if string(key) != mcp.MetaKeyProtocolVersion {
			return s.value(2)
		}
		if version {
			return false
		}
		version = true
		var ok bool
		c.metaVersion, ok = s.plainString()
		return ok
	})
}

// members reads an object's members, its opening brace read already, up
// to its closing one. For each member it reads the name and colon, then
// member reads the value. It reports whether the object is valid JSON and
// member accepted every member; a name with escapes is refused unless
// escapedNames (parseCall compares names as they are written).
func (s *scanner) members(escapedNames bool, member func(name []byte) bool) bool {
	for first := true; ; first = false {
		s.ws()
		if s.consume('}') {
			return true
		}
		if !first && (!s.consume(',') || !s.wsThen()) {
			return false
		}
		name, escaped, ok := s.str()
		if !ok || (escaped && !escapedNames) {
			return false
		}
		s.ws()
		if !s.consume(':') || !member(name) {
			return false
		}
	}
}

// scanner reads JSON bytes.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// wsThen skips whitespace and reports whether anything follows.
func (s *scanner) wsThen() bool {
	s.ws()
	return s.i < len(s.b)
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) consume(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) {
		return false
	}
	for j := range len(lit) {
		if s.b[s.i+j] != lit[j] {
			return false
		}
	}
	s.i += len(lit)
	return true
}

// plainString reads a string value without escapes.
func (s *scanner) plainString() (string, bool) {
	s.ws()
	raw, escaped, ok := s.str()
	if !ok || escaped {
		return "", false
	}
	return string(raw), true
}

// str reads a JSON string and returns its raw contents, whether they hold
// escapes, and whether it is valid (and valid UTF-8).
func (s *scanner) str() (raw []byte, escaped, ok bool) {
	if !s.consume('"') {
		return nil, false, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			s.i++
			if s.i >= len(s.b) {
				return nil, false, false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				// A surrogate half is refused: decoders differ on them.
				if s.i+5 > len(s.b) || !hex4(s.b[s.i+1:s.i+5]) || (s.b[s.i+1]|0x20 == 'd' && s.b[s.i+2] >= '8') {
					return nil, false, false
				}
				s.i += 5
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, false, false
			}
			s.i += n
		}
	}
	return nil, false, false
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// integerID reads an id that is an integer of at most 15 digits (exact in
// the float64 mcp-go decodes ids into).
func (s *scanner) integerID() bool {
	start := s.i
	s.consume('-')
	digits := s.i
	if !s.digits() || s.i-digits > 15 || (s.b[digits] == '0' && s.i-digits > 1) {
		return false
	}
	switch s.peek() {
	case '.', 'e', 'E':
		return false
	}
	return s.i > start
}

// number reads a JSON number that a float64 holds (mcp-go decodes numbers
// into float64s, and fails on larger ones).
func (s *scanner) number() bool {
	start := s.i
	if !s.numberSyntax() {
		return false
	}
	_, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	return err == nil
}

func (s *scanner) numberSyntax() bool {
	s.consume('-')
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.consume('.') && !s.digits() {
		return false
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// value checks one JSON value of any kind, nested at most maxDepth deep.
func (s *scanner) value(depth int) bool {
	if depth > maxDepth {
		return false
	}
	s.ws()
	switch c := s.peek(); {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		s.i++
		return s.members(true, func([]byte) bool { return s.value(depth + 1) })
	case c == '[':
		s.i++
		for first := true; ; first = false {
			s.ws()
			if s.consume(']') {
				return true
			}
			if !first && !s.consume(',') {
				return false
			}
			if !s.value(depth + 1) {
				return false
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

func indexOf(key []byte, names []string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	return -1
}

// looksLike reports whether a member name could be taken for one of names
// by a case-insensitive match, also ignoring underscores and dashes.
func looksLike(name string, names []string) bool {
	for _, m := range names {
		if foldEqual(name, m) {
			return true
		}
	}
	return false
}

// foldEqual compares a and b under Unicode case folding, ignoring '_' and '-'.
func foldEqual(a, b string) bool {
	for {
		a, b = strings.TrimLeft(a, "_-"), strings.TrimLeft(b, "_-")
		if a == "" || b == "" {
			return a == b
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if !equalFoldRune(ra, rb) {
			return false
		}
		a, b = a[na:], b[nb:]
	}
}

func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
