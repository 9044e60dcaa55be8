// Command podium is the podium leaderboard server and its operations tools.
//
//	podium serve     run the server (embedded SQLite, in-memory indexes)
//	podium check     compare the indexes and the entries with the database log
//	podium rebuild   recompute entries from the log, or reload a server's indexes
//	podium version   print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

const usage = `podium - exact, durable, live leaderboards

Usage:
  podium <command> [flags]

Commands:
  serve     run the server (add --demo for live demo boards)
  check     compare the in-memory indexes and the entries with the database; exit 1 on a mismatch
  rebuild   recompute the entries table from the submissions log (server stopped),
            or make a running server reload its indexes (--url)
  version   print the version

Run "podium <command> --help" for the flags of a command. Every flag can also be
set as an environment variable: --data is PODIUM_DATA, --addr is PODIUM_ADDR, ...
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(ctx, args[1:], stdout, stderr)
	case "check":
		err = checkCmd(ctx, args[1:], stdout, stderr)
	case "rebuild":
		err = rebuildCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "podium", Version)
		return 0
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "podium: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errMismatch):
		return 1
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "podium:", err)
	return 1
}

var (
	errMismatch = errors.New("mismatch")
	errUsage    = errors.New("usage")
)
