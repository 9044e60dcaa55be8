package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set at build time by a release build or the Dockerfile, each optional:
//
//	go build -ldflags "-X main.Version=v1.2.3 -X main.Commit=$(git rev-parse HEAD) \
//	  -X main.Date=$(date -u +%FT%TZ)" ./cmd/podium
//
// Version and Commit override what the build info says; Date is the build
// time, which the build info never holds. Unset, podium version falls back
// to the build info (runtime/debug.ReadBuildInfo).
var (
	Version = ""
	Commit  = ""
	Date    = ""
)

// stamp is what -ldflags -X set.
type stamp struct{ Version, Commit, Date string }

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
	Built    string // build time from -X main.Date, "" if not stamped
	Go       string // "go1.26.8"
}

// readBuild reads the running binary's build info.
func readBuild() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return buildFrom(bi, stamp{Version: Version, Commit: Commit, Date: Date})
}

// buildFrom extracts a build from bi (nil when the binary has none, as
// under some test runners); what st holds replaces it. A stamped commit
// that differs from the build info's revision drops the build info's
// "modified" mark, which was about another revision.
func buildFrom(bi *debug.BuildInfo, st stamp) build {
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
	if st.Version != "" {
		b.Version = st.Version
	}
	if st.Commit != "" && st.Commit != b.Revision {
		b.Revision, b.Modified = st.Commit, false
	}
	b.Built = st.Date
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
	if b.Built != "" {
		fmt.Fprintf(w, "  built:       %s\n", b.Built)
	}
	fmt.Fprintf(w, "  go:          %s %s/%s\n", b.Go, runtime.GOOS, runtime.GOARCH)
}

// versionCmd prints the version; --help prints its usage like every
// other command's.
func versionCmd(args []string, stdout io.Writer) error {
	fs := newFlagSet("version", "Prints the version, the VCS revision and commit time, and the Go version of this binary.", stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	readBuild().print(stdout)
	return nil
}
