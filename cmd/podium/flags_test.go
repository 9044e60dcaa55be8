package main

import "io"

// parseServe parses args as serve's flags (and their environment
// variables) into a fresh Config, as the flag tests need.
func parseServe(args ...string) (Config, error) {
	var c Config
	fs := newFlagSet("serve", "", io.Discard)
	c.flags(fs)
	return c, parse(fs, args)
}
