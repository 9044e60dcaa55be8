package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Version overrides the version from the build info when set at build
// time, with -ldflags "-X main.Version=v1.2.3".
var Version = ""

// build describes this binary, from the build info that the Go toolchain
// records: the main module's version (a tag, or a pseudo-version made from
// the commit), the VCS revision, its commit time and whether the tree had
// uncommitted changes. The build info holds no wall-clock build time (it
// would make builds irreproducible); the commit time dates the source.
type build struct {
	Version  string // "v1.2.3", "v0.0.0-20261130...-29b7f3d1e0c2+dirty", or "(devel)"
	Revision string // full commit hash, "" if unknown
	Time     string // commit time, RFC 3339, "" if unknown
	Modified bool   // built from a tree with uncommitted changes
	Go       string // "go1.26.8"
}

// readBuild reads the running binary's build info.
func readBuild() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return buildFrom(bi, Version)
}

// buildFrom extracts a build from bi (nil when the binary has none, as
// under some test runners); override, if set, replaces the version.
func buildFrom(bi *debug.BuildInfo, override string) build {
	b := build{Version: "(devel)", Go: runtime.Version()}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			b.Version = v
		}
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if override != "" {
		b.Version = override
	}
	return b
}

// short is the revision abbreviated to 12 characters, with "+modified".
func (b build) short() string {
	r := b.Revision
	if r == "" {
		return "unknown"
	}
	if len(r) > 12 {
		r = r[:12]
	}
	if b.Modified {
		r += "+modified"
	}
	return r
}

// print writes what podium version shows.
func (b build) print(w io.Writer) {
	fmt.Fprintf(w, "podium %s\n", b.Version)
	rev, at := "unknown (built without version control information)", "unknown"
	if b.Revision != "" {
		rev = b.Revision
		if b.Modified {
			rev += " (with uncommitted changes)"
		}
	}
	if b.Time != "" {
		at = b.Time
	}
	fmt.Fprintf(w, "  revision:    %s\n", rev)
	fmt.Fprintf(w, "  commit time: %s\n", at)
	fmt.Fprintf(w, "  go:          %s %s/%s\n", b.Go, runtime.GOOS, runtime.GOARCH)
}
