package main

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// Command-line mistakes. Go's flag package reports them as "invalid value
// "abc" for flag -stream-coalesce: parse error" and prints the whole usage;
// podium says which flag, in the --name form the usage shows, what it
// expected with an example, and where the usage is, and exits 2.

// usageError is a mistake on the command line: run prints it with a hint
// to --help and exits 2.
type usageError struct {
	cmd string // "serve", "check", ...; "" for podium itself
	msg string
}

func (e *usageError) Error() string { return e.msg }

// Is makes a usage error match errUsage.
func (e *usageError) Is(target error) bool { return target == errUsage }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// setupError is a command that could not do its work for how it was set
// up, not for what it found: no admin key to ask a server with, or a key
// the server refused. run prints it as such and exits 3, so that a check
// that could not run is not read as a check that found differences.
type setupError struct{ msg string }

func (e *setupError) Error() string { return e.msg }

// badValue records the first value that a checked flag refused, because
// the flag package keeps only the text of the error.
type badValue struct {
	name, value, want string
}

// checkedValue wraps a flag's value so that a value it refuses is recorded
// with what the flag expects.
type checkedValue struct {
	flag.Value
	name string
	want string // "a duration (e.g. 200ms, 1s)"
	bad  **badValue
}

func (v *checkedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		if *v.bad == nil {
			*v.bad = &badValue{name: v.name, value: s, want: v.want}
		}
		return err
	}
	return nil
}

// checkedBool keeps a boolean flag usable without a value (--demo).
type checkedBool struct{ checkedValue }

func (v *checkedBool) IsBoolFlag() bool { return true }

// checkValues wraps every typed flag of fs and returns where the first
// refused value is recorded.
func checkValues(fs *flag.FlagSet) **badValue {
	bad := new(*badValue)
	fs.VisitAll(func(f *flag.Flag) {
		if _, done := f.Value.(*checkedValue); done {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		cv := checkedValue{Value: f.Value, name: f.Name, bad: bad}
		switch g.Get().(type) {
		case time.Duration:
			cv.want = "a duration (e.g. 200ms, 1s)"
		case int, int64, uint, uint64:
			cv.want = "a whole number (e.g. " + f.DefValue + ")"
		case float64:
			cv.want = "a number"
		case bool:
			cv.want = "true or false"
			f.Value = &checkedBool{cv}
			return
		default:
			return
		}
		f.Value = &cv
	})
	return bad
}

// explain turns an error of fs.Parse into a usage error that names the
// flag as --name, and for an unknown flag suggests the one meant.
func explain(fs *flag.FlagSet, err error, bad *badValue) error {
	cmd := fs.Name()
	if bad != nil {
		return usagef(cmd, "--%s: %q is not %s", bad.name, bad.value, bad.want)
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		if s := suggestFlag(fs, name); s != "" {
			return usagef(cmd, "unknown flag --%s (did you mean --%s?)", name, s)
		}
		return usagef(cmd, "unknown flag --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return usagef(cmd, "--%s needs a value", strings.TrimLeft(name, "-"))
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return usagef(cmd, "bad flag syntax %q (flags look like --name value or --name=value)", arg)
	}
	return usagef(cmd, "%s", msg)
}
