// Copyright 2024 The Strata Authors.

// Package sample is a small file to exercise the Go splitter.
package sample

import (
	"context"
	"errors"
)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("closed")

const (
	a = 1
	b = 2
)

// tmpl holds a template whose text looks like Go code.
var tmpl = `
func fake() {
	// not a real function
}
`

/*
Server serves.
func commented() {}
*/
type Server struct {
	addr string
}

// Run runs the server until ctx is done.
//
// It never returns nil.
func (s *Server) Run(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

//go:noinline
func (s Server) Addr() string { return s.addr }

func helper(
	x int,
	y int,
) int {
	r := '`' // a rune, not a raw string
	_ = r
	return x + y
}
