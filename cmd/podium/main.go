// Command podium is the podium leaderboard server and its operations tools.
//
//	podium serve     run the server (embedded SQLite, in-memory indexes)
//	podium check     compare the indexes and the entries with the database log
//	podium rebuild   recompute entries from the log, or reload a server's indexes
//	podium backup    copy the database consistently, while the server runs
//	podium restore   put a backup in place of a data directory's database
//	podium migrate   move a data directory to PostgreSQL and verify the copy
//	podium version   print the version, VCS revision and commit time
//	podium healthcheck  exit 0 if the local server's /readyz answers 200
//	podium export    write a running server's boards, players and entries to a dump
//	podium import    apply a dump (or a CSV of entries) to a running server
//
// Exit codes: 0 success (and --help), 1 a failure or a check that found
// differences, 2 a mistake on the command line, 3 a setup error (no admin
// key to ask a server with, or a key the server refused).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/podiumhq/podium/client"
)

const usage = `podium - exact, durable, live leaderboards

Usage:
  podium <command> [flags]

Commands:
  serve     run the server (add --demo for live demo boards)
  check     check the database and the indexes; exit 1 on a difference
            (--url checks a running server, which holds its data directory;
            --db, --url once per node and --redis check several nodes)
  rebuild   recompute the entries table from the submissions log (server stopped,
            or --db with every node stopped), make running servers reload their
            indexes (--url), or delete stale Redis keys (--redis)
  backup    write a consistent copy of the database to a file (server running or not)
  restore   put a backup in place of the database of a data directory (server stopped)
  migrate   move a data directory to PostgreSQL (--from DIR --db postgres://...) and
            verify the copy
  version   print the version, VCS revision and commit time
  healthcheck
            exit 0 if the server at --addr on this machine is ready (/readyz
            answers 200), 1 if not: the container HEALTHCHECK (no curl needed)
  export    write a running server's boards, players and entries to a JSON Lines
            dump (--url, PODIUM_ADMIN_KEY)
  import    apply a dump, or a CSV of entries (--csv --board), to a running server
            idempotently (--url, --in, PODIUM_ADMIN_KEY)

Run "podium <command> --help" for the flags of a command. Every flag can also be
set as an environment variable: --data is PODIUM_DATA, --addr is PODIUM_ADDR, ...
Exit codes: 0 success, 1 failure (or differences found), 2 command-line mistake,
3 setup error (no admin key for --url, or the server refused it).
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
	case "backup":
		err = backupCmd(ctx, args[1:], stdout, stderr)
	case "restore":
		err = restoreCmd(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrateCmd(ctx, args[1:], stdout, stderr)
	case "healthcheck":
		err = healthcheckCmd(ctx, args[1:], stdout, stderr)
	case "export":
		err = exportCmd(ctx, args[1:], stdout, stderr)
	case "import":
		err = importCmd(ctx, args[1:], stdout, stderr)
	case "version":
		err = versionCmd(args[1:], stdout)
	case "--version", "-version":
		readBuild().print(stdout)
		return 0
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		msg := fmt.Sprintf("unknown command %q", args[0])
		if s := suggestCommand(args[0]); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		err = &usageError{msg: msg}
	}
	var ue *usageError
	var se *setupError
	var ce *client.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "podium %s: setup error: %s\n", args[0], se.msg)
		return 3
	case errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
		fmt.Fprintf(stderr, "podium %s: setup error: the server refused the admin key: %v\n", args[0], err)
		return 3
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errMismatch):
		return 1
	case errors.As(err, &ue):
		if ue.cmd == "" {
			fmt.Fprintf(stderr, "podium: %s\nRun 'podium --help' for usage.\n", ue.msg)
		} else {
			fmt.Fprintf(stderr, "podium %s: %s\nRun 'podium %s --help' for usage.\n", ue.cmd, ue.msg, ue.cmd)
		}
		return 2
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "podium %s: %v\nRun 'podium --help' for usage.\n", args[0], err)
		return 2
	}
	fmt.Fprintf(stderr, "podium %s: %v\n", args[0], err)
	return 1
}

var (
	errMismatch = errors.New("mismatch")
	errUsage    = errors.New("usage")
)
