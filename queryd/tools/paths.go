package tools

// Document paths: folders and names (objkey.Split), and path arguments
// (objkey.ParseDocument). A document's path is an uploaded file's
// ("docs/guide.md") or a member's, a file inside another: an e-mail's
// attachment, an archive's file, a mailbox's message, at
// "<container path>//<member path>" ("mail/a.eml//notes.txt",
// objkey.MemberPath). A member is a document like any other: every tool
// lists, reads and finds it by its path and ids. A path is never cleaned
// (path.Clean would make the "//" a "/").

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-kb/strata/shared/objkey"
)

// Folders and names follow objkey.Split, so a file inside a container (an
// e-mail's attachment, a ZIP's file: "mail/a.eml//notes.txt") is in the
// folder of its container's path ("mail/a.eml"), never in a folder
// "mail/a.eml/" of an empty name. A container with members on main is
// thus both a DOCUMENT (its own text, in its own folder) and a FOLDER of
// the same path and name (its members), each with its own path_part_id
// (ids.File and ids.Folder): list_contents lists both, the folder first,
// as it lists a folder's subfolders before its documents.

// folderOf is the folder holding p ("" at the project root).
func folderOf(p string) string { folder, _ := objkey.Split(p); return folder }

// baseName is p's name in its folder.
func baseName(p string) string { _, name := objkey.Split(p); return name }

// folderChain is folder and its ancestors, outermost first ("" = none):
// "b.zip//reports" is ["b.zip", "b.zip//reports"].
func folderChain(folder string) []string {
	var chain []string
	for f := folder; f != ""; f = folderOf(f) {
		chain = append(chain, f)
	}
	slices.Reverse(chain)
	return chain
}

// pathNames are the names along p, outermost first: "mail/a.eml//notes.txt"
// is [mail a.eml notes.txt].
func pathNames(p string) []string {
	names := make([]string, 0, strings.Count(p, "/")+1)
	for _, f := range folderChain(p) {
		names = append(names, baseName(f))
	}
	return names
}

// documentPath checks a project-relative path argument (arg) naming a
// document of project: an uploaded file's or a member's. It returns the
// path without a leading "/".
func documentPath(arg, project, raw string) (string, error) {
	p := strings.TrimPrefix(raw, "/")
	if p == "" || len(p) > objkey.MaxKeyBytes {
		return "", userErrorf("%s must be a project-relative path of 1 to %d bytes", arg, objkey.MaxKeyBytes)
	}
	if _, err := objkey.ParseDocument(project + "/" + p); err != nil {
		return "", userErrorf("%s %q is not a valid file path: %s. A path is project-relative, as list_files shows it (\"docs/guide.md\"); "+
			"a file inside another (an e-mail's attachment, an archive's file) is <container path>//<member path> (\"mail/a.eml//notes.txt\")",
			arg, clip(p), pathProblem(project, p))
	}
	return p, nil
}

// pathProblem says what is wrong with p, a path objkey.ParseDocument
// refused: in the container's part, or in the member's.
func pathProblem(project, p string) string {
	container, member, isMember := strings.Cut(p, objkey.MemberSeparator)
	if _, err := objkey.Parse(project + "/" + container); err != nil {
		return keyProblem(err)
	}
	if !isMember {
		return "not a valid path"
	}
	if member == "" {
		return "nothing follows \"//\" (a member path names a file inside the container)"
	}
	if _, err := objkey.Parse(project + "/" + strings.ReplaceAll(member, objkey.MemberSeparator, "/")); err != nil {
		return "member path: " + keyProblem(err)
	}
	return fmt.Sprintf("longer than %d bytes with the project's name", objkey.MaxKeyBytes)
}

// keyProblem is the reason of an objkey error, without the key it quotes
// (`invalid object key "acme/a//b": empty path segment`).
func keyProblem(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\": "); i >= 0 {
		return msg[i+3:]
	}
	return msg
}
