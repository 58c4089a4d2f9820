package main

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// connectNATS connects to the stack's NATS (a CLI fails fast: no retries).
func connectNATS(c conn) (*nats.Conn, jetstream.JetStream, error) {
	if err := c.require("nats-url"); err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(c.get("nats-url"), nats.Name("strata-cli"), nats.Timeout(5*time.Second), nats.MaxReconnects(3))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w", c.get("nats-url"), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}

// connectNATS resolves the command's connection settings and connects to NATS.
func (cf *connFlags) connectNATS(a *app) (*nats.Conn, jetstream.JetStream, error) {
	c, err := cf.resolve(a)
	if err != nil {
		return nil, nil, err
	}
	return connectNATS(c)
}
