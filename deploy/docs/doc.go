// Package docs holds the checks of Strata's documentation, as tests:
// README.md stays a short manual (at most 350 lines, starting with the two
// commands); every measured figure in it links the report under docs/bench
// or docs/eval it comes from, appears in that report and, for a Markdown
// report, in the report's Result lines (its current figures); every
// relative link of README.md and docs/**/*.md points to a file (and
// heading) that exists; and those pages name only tasks Taskfile.yml
// defines and repository paths that exist. Nothing here needs a server or
// the network.
package docs
