package extracttest

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// MemberSep joins a member's path to its container's, as the ingestor
// does (objkey.MemberPath): "bundle.zip//inner.zip//a.txt".
const MemberSep = "//"

// Member returns the member of doc at path, its path in each container
// joined with MemberSep ("inner.zip//a.txt"), or nil.
func Member(doc *extract.Document, path string) *extract.Document {
	for _, p := range strings.Split(path, MemberSep) {
		var next *extract.Document
		for _, m := range doc.Members {
			if m.Path == p {
				next = m.Doc
				break
			}
		}
		if next == nil {
			return nil
		}
		doc = next
	}
	return doc
}

// MemberPaths are the paths of doc's members and of theirs, each joined
// to its container's with MemberSep, in order: a container before its
// members.
func MemberPaths(doc *extract.Document) []string {
	var out []string
	eachMember(doc, func(path string, _ *extract.Document) { out = append(out, path) })
	return out
}

// eachMember calls f with each member of doc and of its members, by its
// path joined with MemberSep, a container before its members.
func eachMember(doc *extract.Document, f func(path string, d *extract.Document)) {
	var walk func(prefix string, d *extract.Document)
	walk = func(prefix string, d *extract.Document) {
		for _, m := range d.Members {
			if m.Doc == nil {
				continue
			}
			f(prefix+m.Path, m.Doc)
			walk(prefix+m.Path+MemberSep, m.Doc)
		}
	}
	walk("", doc)
}

// eachDoc calls f with doc (path "") and each of its members (eachMember).
func eachDoc(doc *extract.Document, f func(path string, d *extract.Document)) {
	f("", doc)
	eachMember(doc, f)
}

// Warned reports whether doc or one of its members has a warning that
// holds every one of words.
func Warned(doc *extract.Document, words ...string) bool {
	found := false
	eachDoc(doc, func(_ string, d *extract.Document) {
		for _, w := range d.Warnings {
			all := true
			for _, word := range words {
				all = all && strings.Contains(w, word)
			}
			found = found || all
		}
	})
	return found
}

// memberPathProblem says what is wrong with a member's path, or "": it
// must be '/'-separated elements (so never MemberSep), none empty, "." or
// "..", valid UTF-8 without control or format characters (what
// container.MemberPath leaves).
func memberPathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	case strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }):
		return "has a control or format character"
	}
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			return "has an empty, \".\" or \"..\" element"
		}
	}
	return ""
}

// memberProfile is what Check holds a member to: a document of its own
// format (its reader's suite holds it to that format's promises), pages
// when it has some, a language when it names one.
func memberProfile(doc *extract.Document) Profile {
	return Profile{Format: doc.Format, Pages: doc.Pages > 0, Images: true, Language: doc.Language != ""}
}
