package code

import (
	"regexp"
	"strings"
)

// spec is what the splitter knows about one language.
type spec struct {
	syn *syntax
	// top reports whether line i, at column 0, starts a top-level declaration.
	top matcher
	// attach reports whether a line directly above a declaration belongs to
	// it (decorators, attributes, annotations; comments are handled for all
	// languages).
	attach func(content string) bool
	// container reports whether a declaration's body is itself split on
	// member declarations (classes, impl blocks...), which member matches.
	container func(content string) bool
	member    matcher
}

// matcher reports whether line i of f starts a declaration. It sees the
// whole file because C needs to look at the following lines.
type matcher func(f *file, i int) bool

// pattern describes declaration lines. The cheap filters (words,
// contains, open) run first and keep the regexp off most lines.
type pattern struct {
	words    map[string]bool // the first word must be one of these
	fold     bool            // compare the first word in lower case
	contains []string        // the line must contain one of these
	// open requires the line not to end with ';' or ',': a declaration
	// with a body, not a prototype, field or enum constant.
	open bool
	// sig, when set, requires the line to look like a function signature
	// (see isSignature) whose type part may use these punctuation bytes.
	sig string
	re  *regexp.Regexp // when set, must match
	not *regexp.Regexp // when set, must not match
}

func (p pattern) match(f *file, i int) bool { return p.matches(f.content(i)) }

// matches applies the pattern to a line's content.
func (p pattern) matches(s string) bool {
	if p.words != nil {
		w := firstWord(s)
		if p.fold {
			w = strings.ToLower(w)
		}
		if !p.words[w] {
			return false
		}
	}
	if p.open && (strings.HasSuffix(s, ";") || strings.HasSuffix(s, ",")) {
		return false
	}
	if p.contains != nil && !containsAny(s, p.contains) {
		return false
	}
	if p.sig != "" && !isSignature(s, p.sig) {
		return false
	}
	if p.re != nil && !p.re.MatchString(s) {
		return false
	}
	return p.not == nil || !p.not.MatchString(s)
}

// statementWords start statements that can look like "name(" but never
// declare anything.
var statementWords = words("if", "else", "for", "foreach", "while", "do", "switch", "case",
	"catch", "return", "throw", "new", "try", "await", "super", "this", "assert", "sizeof",
	"goto", "break", "continue", "delete", "typeof", "using", "lock", "fixed")

// isSignature reports whether s, up to its first '(', is a function or
// method signature: identifiers (types, modifiers, the name) and the type
// punctuation in punct, ending in the name, and not a statement. Written
// by hand rather than as a regexp because it runs on every member line.
func isSignature(s, punct string) bool {
	k := strings.IndexByte(s, '(')
	if k <= 0 {
		return false
	}
	prefix := strings.TrimRight(s[:k], " \t")
	if prefix == "" || statementWords[firstWord(prefix)] {
		return false
	}
	if last := prefix[len(prefix)-1]; !isIdent(last) && last != '>' && last != '$' {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !isIdent(c) && c != ' ' && c != '\t' && strings.IndexByte(punct, c) < 0 {
			return false
		}
	}
	return !isDigit(prefix[0])
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func words(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// firstWord is the leading identifier of s.
func firstWord(s string) string {
	i := 0
	for i < len(s) && (isIdent(s[i]) || s[i] == '$') {
		i++
	}
	return s[:i]
}

func anyOf(ps ...pattern) matcher {
	return func(f *file, i int) bool {
		for _, p := range ps {
			if p.match(f, i) {
				return true
			}
		}
		return false
	}
}

// prefixes returns an attach function for lines starting with any prefix.
func prefixes(ps ...string) func(string) bool {
	return func(s string) bool {
		for _, p := range ps {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
		return false
	}
}

var mre = regexp.MustCompile

// Shared syntaxes.
var (
	cSyntax = (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/",
		quotes: []quote{{`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish()
	cppSyntax = (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", cppRaw: true,
		quotes: []quote{{`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish()
	jsSyntax = (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/",
		quotes: []quote{{"`", "`", true, true}, {`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish()
	shellSyntax = (&syntax{
		hash: hashWordStart, heredoc: shellHeredoc, codeEscapes: true,
		quotes: []quote{{`"`, `"`, true, true}, {`'`, `'`, false, true}},
	}).finish()
)

// Go.
var goSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/",
		quotes: []quote{{"`", "`", false, true}, {`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish(),
	top: pattern{words: words("func", "type", "var", "const")}.match,
}

// Python.
var pyDecl = pattern{re: mre(`^(?:async\s+def|def|class)\s+\w`), words: words("async", "def", "class")}

var pythonSpec = &spec{
	syn: (&syntax{
		hash: hashAnywhere,
		quotes: []quote{
			{`"""`, `"""`, true, true}, {`'''`, `'''`, true, true},
			{`"`, `"`, true, false}, {`'`, `'`, true, false},
		},
	}).finish(),
	top:       pyDecl.match,
	attach:    prefixes("@"),
	container: pattern{words: words("class")}.matches,
	member:    pyDecl.match,
}

// JavaScript and TypeScript.
var (
	jsWords = words("export", "async", "function", "class", "const", "let", "var",
		"interface", "type", "enum", "declare", "abstract", "namespace", "module")
	jsFunc  = `^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?function\b`
	jsClass = `^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:abstract\s+)?class\b`
	// const f = (a) => ..., const f = async x => ..., const f = function...,
	// and const f = ( with the parameters on the following lines.
	jsArrow = `^(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[\w$]+\s*=>|\(\s*$)`
	// export const x = makeThing(, const styles = {: a multi-line
	// initializer is as much a unit as a function.
	jsInit  = `^(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]*)?=.*[({\[` + "`" + `]$`
	tsTypes = `^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:interface|type\s+[\w$]+|enum|const\s+enum|namespace|module)\b`
	// Methods: constructor(, async *gen(, get x(, #secret(.
	jsMethod = pattern{sig: "$#*?<>, ", open: true}
	// Arrow-function properties: onClick = (e) => {.
	jsProperty = pattern{
		re:       mre(`^(?:(?:static|public|private|protected|readonly|override)\s+)*#?[\w$]+\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[\w$]+\s*=>)`),
		open:     true,
		contains: []string{"=>", "function"},
	}
	jsMember = anyOf(jsMethod, jsProperty)
)

var javascriptSpec = &spec{
	syn:       jsSyntax,
	top:       pattern{re: mre(jsFunc + `|` + jsClass + `|` + jsArrow + `|` + jsInit), words: jsWords}.match,
	attach:    prefixes("@"),
	container: pattern{words: jsWords, re: mre(jsClass)}.matches,
	member:    jsMember,
}

var typescriptSpec = &spec{
	syn:       jsSyntax,
	top:       pattern{re: mre(jsFunc + `|` + jsClass + `|` + jsArrow + `|` + jsInit + `|` + tsTypes), words: jsWords}.match,
	attach:    prefixes("@"),
	container: pattern{words: jsWords, re: mre(jsClass)}.matches,
	member:    jsMember,
}

// Java.
var (
	javaAnno = `(?:@[\w.]+(?:\([^)]*\))?\s+)*`
	javaType = pattern{
		re:       mre(`^` + javaAnno + `(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\s+)*(?:class|interface|enum|record|@interface)\s+\w`),
		open:     true,
		contains: []string{"class", "interface", "enum", "record"},
	}
	// Methods and constructors: modifiers, type parameters, the return
	// type and the name before '('.
	javaMethod = pattern{sig: "$.<>,?[]@ ", open: true}
)

var javaSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/",
		quotes: []quote{{`"""`, `"""`, true, true}, {`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish(),
	top:       javaType.match,
	attach:    prefixes("@"),
	container: javaType.matches,
	member:    anyOf(javaType, javaMethod),
}

// Kotlin.
var (
	kotlinMods = `(?:@[\w.:]+(?:\([^)]*\))?\s+|(?:public|private|internal|protected|open|abstract|sealed|data|enum|annotation|inner|inline|value|override|suspend|tailrec|operator|infix|external|expect|actual|const|companion|fun)\s+)*`
	kotlinTop  = pattern{
		re:       mre(`^` + kotlinMods + `(?:class|interface|object|fun|typealias)\b`),
		contains: []string{"class", "interface", "object", "fun", "typealias"},
	}
	kotlinMem = pattern{
		re:       mre(`^` + kotlinMods + `(?:class|interface|object|fun|init|constructor)\b`),
		open:     true,
		contains: []string{"class", "interface", "object", "fun", "init", "constructor"},
	}
)

var kotlinSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", nestedBlocks: true,
		quotes: []quote{{`"""`, `"""`, false, true}, {`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish(),
	top:    kotlinTop.match,
	attach: prefixes("@"),
	container: pattern{
		contains: []string{"class", "interface", "object"},
		re:       mre(`^` + kotlinMods + `(?:class|interface|object)\b`),
	}.matches,
	member: kotlinMem.match,
}

// C#.
var (
	csMods = `(?:public|private|protected|internal|static|abstract|sealed|partial|readonly|unsafe|file|ref|new|virtual|override|async|extern)\s+`
	csType = pattern{
		re:       mre(`^(?:\[.*\]\s*)?(?:` + csMods + `)*(?:class|interface|enum|struct|record|namespace|delegate)\b`),
		contains: []string{"class", "interface", "enum", "struct", "record", "namespace", "delegate"},
	}
	csMeth = pattern{sig: ".<>,?[]~ ", open: true}
)

var csharpSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", csharp: true,
		quotes: []quote{{`'`, `'`, true, false}},
	}).finish(),
	top:    csType.match,
	attach: prefixes("["),
	// Types and namespaces with a body; a delegate has none.
	container: pattern{contains: csType.contains, re: csType.re, open: true, not: mre(`\bdelegate\b`)}.matches,
	member:    anyOf(csType, csMeth),
}

// Rust.
var rustDecl = pattern{
	re:    mre(`^(?:pub(?:\([^)]*\))?\s+)?(?:(?:default|const|async|unsafe|extern(?:\s+"[^"]*")?)\s+)*(?:(?:fn|struct|enum|union|impl|trait|mod|const|static|type)\b|macro_rules!)`),
	words: words("pub", "default", "const", "async", "unsafe", "extern", "fn", "struct", "enum", "union", "impl", "trait", "mod", "static", "type", "macro_rules"),
	// "mod foo;" only names a file; it is an import, not a section.
	not: mre(`^(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;`),
}

var rustSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", nestedBlocks: true,
		rustStrings: true,
		quotes:      []quote{{`"`, `"`, true, true}},
	}).finish(),
	top:    rustDecl.match,
	attach: prefixes("#["),
	container: pattern{
		words: words("pub", "unsafe", "impl", "trait", "mod"),
		re:    mre(`^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?(?:impl|trait|mod)\b`),
		open:  true,
	}.matches,
	member: rustDecl.match,
}

// C and C++.
var (
	cBlock  = pattern{words: words("typedef", "struct", "union", "enum"), open: true}
	cppType = pattern{
		re:       mre(`^(?:template\s*<.*>\s*)?(?:class|struct|union|enum(?:\s+class)?|namespace)\b`),
		open:     true,
		contains: []string{"class", "struct", "union", "enum", "namespace"},
	}
	cMacro = mre(`^#\s*define\s+\w`)
	// A return-type line above a function name on its own line:
	// "static int" / "main(void)".
	cReturnType = mre(`^[A-Za-z_][\w \t\*]*$`)
	// The type punctuation before a C or C++ function name: pointers,
	// references, scopes, templates, arrays.
	cPunct    = "*&:<>,~[]"
	cppMethod = pattern{sig: cPunct, open: true}
)

func cTop(f *file, i int) bool {
	s := f.content(i)
	if cBlock.match(f, i) {
		return true
	}
	if strings.HasPrefix(s, "#") {
		if !cMacro.MatchString(s) {
			return false
		}
		return strings.HasSuffix(s, `\`) // a multi-line macro is a block of its own
	}
	return cFunction(f, i)
}

func cppTop(f *file, i int) bool { return cppType.match(f, i) || cTop(f, i) }

// cFunction recognises a function definition: a name followed by '(' whose
// '{' comes, on this line or one of the next few, before any ';' and
// before a blank line (which a macro call like FOO(x) is followed by).
// The look-ahead is bounded so that the whole pass stays linear.
func cFunction(f *file, i int) bool {
	s := f.content(i)
	if s == "" || !(isIdent(s[0]) || s[0] == ':' || s[0] == '~') || !isSignature(s, cPunct) {
		return false
	}
	const maxLines, maxBytes = 5, 2048
	at := int(f.lines[i].body) + strings.IndexByte(s, '(')
	end := min(len(f.text), at+maxBytes)
	newlines, empty := 0, false
	for k := at; k < end; k++ {
		switch c := f.text[k]; c {
		case '{':
			return true
		case ';':
			return false
		case '\n':
			if empty && newlines > 0 {
				return false // a blank line
			}
			if newlines++; newlines > maxLines {
				return false
			}
			empty = true
		default:
			if !isSpace(c) {
				empty = false
			}
		}
	}
	return false
}

func cAttach(s string) bool {
	return cReturnType.MatchString(s) && !statementWords[firstWord(s)]
}

// C uses the C++ rules too: a .h file is as often C++ as C, and C code
// does not start lines with class, namespace or template.
var cSpec = &spec{
	syn:       cSyntax,
	top:       cppSpec.top,
	attach:    cppSpec.attach,
	container: cppSpec.container,
	member:    cppSpec.member,
}

var cppSpec = &spec{
	syn: cppSyntax,
	top: cppTop,
	attach: func(s string) bool {
		return strings.HasPrefix(s, "template") || strings.HasPrefix(s, "[[") || cAttach(s)
	},
	// Classes and namespaces; enums hold constants, not members.
	container: pattern{contains: cppType.contains, re: cppType.re, open: true, not: mre(`\benum\b`)}.matches,
	member:    func(f *file, i int) bool { return cppMethod.match(f, i) || cppTop(f, i) },
}

// Shell.
var shellSpec = &spec{
	syn: shellSyntax,
	top: pattern{
		re:       mre(`^(?:function\s+[\w.:@-]+|[\w.:@-]+\s*\(\s*\))`),
		contains: []string{"function", "("},
	}.match,
}

// Ruby.
var rubyDecl = pattern{re: mre(`^(?:def|class|module)\s`), words: words("def", "class", "module")}

var rubySpec = &spec{
	syn: (&syntax{
		hash: hashAnywhere, rubyDocs: true, heredoc: rubyHeredoc,
		quotes: []quote{{`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish(),
	top:       rubyDecl.match,
	container: pattern{words: words("class", "module")}.matches,
	member:    rubyDecl.match,
}

// PHP.
var phpSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, hash: hashAnywhere, blockOpen: "/*", blockClose: "*/",
		heredoc: phpHeredoc,
		quotes:  []quote{{`"`, `"`, true, false}, {`'`, `'`, true, false}},
	}).finish(),
	top: pattern{
		re:    mre(`^(?:(?:abstract|final|readonly)\s+)*(?:function|class|interface|trait|enum)\s+&?\w`),
		words: words("abstract", "final", "readonly", "function", "class", "interface", "trait", "enum"),
	}.match,
	container: pattern{
		words: words("abstract", "final", "readonly", "class", "interface", "trait", "enum"),
		re:    mre(`^(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s`),
	}.matches,
	member: pattern{re: mre(`^(?:(?:public|private|protected|static|abstract|final|readonly)\s+)*function\s+&?\w`), open: true}.match,
}

// Swift.
var (
	swiftAttr  = `(?:@\w+(?:\([^)]*\))?\s+)*`
	swiftWords = []string{"func", "class", "struct", "enum", "protocol", "extension", "actor", "typealias", "init", "subscript"}
	swiftTop   = pattern{contains: swiftWords, re: mre(`^` + swiftAttr + `(?:(?:public|private|fileprivate|internal|open|final|indirect|nonisolated)\s+)*(?:func|class|struct|enum|protocol|extension|actor|typealias)\b`)}
	swiftMem   = pattern{contains: swiftWords, re: mre(`^` + swiftAttr + `(?:(?:public|private|fileprivate|internal|open|final|static|class|override|mutating|nonmutating|convenience|required|dynamic|nonisolated|indirect)\s+)*(?:func|init|deinit|subscript|class|struct|enum|extension|protocol|actor)\b`)}
)

var swiftSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", nestedBlocks: true,
		quotes: []quote{{`"""`, `"""`, true, true}, {`"`, `"`, true, false}},
	}).finish(),
	top:    swiftTop.match,
	attach: prefixes("@"),
	container: pattern{
		contains: []string{"class", "struct", "enum", "protocol", "extension", "actor"},
		re:       mre(`^` + swiftAttr + `(?:(?:public|private|fileprivate|internal|open|final|indirect)\s+)*(?:class|struct|enum|protocol|extension|actor)\b`),
	}.matches,
	member: swiftMem.match,
}

// SQL: each CREATE or ALTER statement is a section.
var sqlSpec = &spec{
	syn: (&syntax{
		lineComments: []string{"--"}, blockOpen: "/*", blockClose: "*/", sqlDollar: true,
		quotes: []quote{{`'`, `'`, false, true}, {`"`, `"`, false, false}},
	}).finish(),
	top: pattern{words: words("create", "alter"), fold: true}.match,
}

// Make: each rule is a section; "x := y" assignments are not rules.
var makeSpec = &spec{
	syn: (&syntax{hash: hashAnywhere}).finish(),
	top: pattern{re: mre(`^[^\s#=:][^=:#]*::?(?:[^=]|$)`), contains: []string{":"}}.match,
}

// Dockerfile: each build stage is a section.
var dockerSpec = &spec{
	syn: (&syntax{hash: hashLineStart, heredoc: shellHeredoc}).finish(),
	top: pattern{words: words("from"), fold: true}.match,
}

var specs = map[string]*spec{
	"go":         goSpec,
	"python":     pythonSpec,
	"javascript": javascriptSpec,
	"typescript": typescriptSpec,
	"java":       javaSpec,
	"kotlin":     kotlinSpec,
	"csharp":     csharpSpec,
	"rust":       rustSpec,
	"c":          cSpec,
	"cpp":        cppSpec,
	"shell":      shellSpec,
	"ruby":       rubySpec,
	"php":        phpSpec,
	"swift":      swiftSpec,
	"sql":        sqlSpec,
	"make":       makeSpec,
	"dockerfile": dockerSpec,
}
