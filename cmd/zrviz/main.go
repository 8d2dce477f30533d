// Command zrviz shows what the Linux F2FS kernel does to a file's dnode slots and to the segment
// information table when a range of the file is zeroed with fallocate(FALLOC_FL_ZERO_RANGE), in the
// upstream per-block mode and in the batched mode of the patch.
//
// Usage:
//
//	zrviz                      serve the embedded demo image at http://127.0.0.1:8080
//	zrviz serve [flags] [IMG]  serve the demo and the given images
//	zrviz inspect [flags]      volume summary and every path
//	zrviz map [flags] PATH     a file's slot map
//	zrviz run [flags] PATH     zero a range of a file in both modes and compare
//	zrviz block [flags] ADDR   what one block is and who owns it
//	zrviz sandbox 'SLOTS'      the same on a slot list typed by hand
//	zrviz exercise [flags]     a seeded exercise; -c prints the answers
//	zrviz diff [flags] A B     what differs between two images of one filesystem
//	zrviz gc [flags] OP ...    checkpoint and garbage collection, victims as Linux 6.12 picks
//	zrviz site [flags] DIR     zrviz as a static site: WebAssembly in the browser, no server
//	zrviz survey [flags]       what batching saves on every file of an image
//
// IMG, A and B may be "demo", the embedded demo image (a file called demo is ./demo).
//
// Run "zrviz COMMAND --help" for the flags of a command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/zrviz/zrviz/request"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	// SIGINT, SIGTERM and SIGHUP end the command cleanly (serve: grace period, partial uploads
	// removed, exit 0). A second one ends the process at once, with one line and the status a
	// shell reports for the signal (128+n), rather than dying by the signal.
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	second := make(chan os.Signal, 1)
	signal.Notify(second, sigs...)
	go func() {
		<-second // the first, which ctx reports
		sig := <-second
		fmt.Fprintf(os.Stderr, "zrviz: %v again: exiting at once\n", sig)
		code := 1
		if n, ok := sig.(syscall.Signal); ok {
			code = 128 + int(n)
		}
		os.Exit(code)
	}()
	err := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Ctrl-C (or SIGTERM, SIGHUP) ended a command; what it had made is removed.
		fmt.Fprintln(os.Stderr, "zrviz: interrupted")
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zrviz:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		var ec exitCoder
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line; main exits with status 2 for it.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitCoder is an error that chooses main's exit status (run: 2 for an unreadable --ops or --trace
// file, 3 when a kernel trace diverges from the model).
type exitCoder interface{ ExitCode() int }

// Main runs one zrviz command. It is main without the process: tests call it with their own arguments
// and writers, and only main prints errors and exits.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cmdServe(ctx, nil, stdout, stderr)
	}
	name, rest := args[0], args[1:]
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, rest, stdout, stderr)
		}
	}
	switch name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return nil
	}
	if len(name) > 0 && name[0] == '-' {
		// "zrviz --addr :9000" is "zrviz serve --addr :9000".
		return cmdServe(ctx, args, stdout, stderr)
	}
	return usageError{fmt.Sprintf("unknown command %q (want %s; see zrviz help)", name, commandList())}
}

// command is one zrviz subcommand: how Main runs it and the lines the usage gives it.
type command struct {
	name string
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// lines are the usage's lines for the command: a synopsis after "zrviz " and what it does.
	lines [][2]string
}

// commands is the one table of subcommands: Main dispatches on it, and the usage and the
// unknown-command message are made from it, so no list of commands can miss one.
func commands() []command {
	return []command{
		{"serve", cmdServe, [][2]string{{"serve [flags] [IMG ...]", "serve the demo and the given images"}}},
		{"inspect", cmdInspect, [][2]string{{"inspect [flags]", "volume summary and every path"}}},
		{"map", cmdMap, [][2]string{{"map [flags] PATH", "a file's slot map (extents and nodes)"}}},
		{"run", cmdRun, append(playedLines(),
			[2]string{"run --ops FILE [flags]", "several operations in order; --trace FILE checks a kernel's calls"})},
		{"sandbox", cmdSandbox, [][2]string{{"sandbox [flags] 'SLOTS'", "run both modes on a slot list typed by hand ('7200-7263 NEW 9000 | 9001')"}}},
		{"exercise", cmdExercise, [][2]string{{"exercise [flags]", "a seeded exercise with questions; -c prints the engine's answers"}}},
		{"block", cmdBlock, [][2]string{{"block [flags] ADDR", "what block ADDR is, who owns it, its fields (ADDR decimal or 0x hex)"}}},
		{"diff", cmdDiff, [][2]string{{"diff [flags] A B", "what differs between two images of one filesystem, field by field"}}},
		{"gc", cmdGC, [][2]string{{"gc [flags] OP ...", "checkpoint, gc 1, gc 0 as Linux 6.12 picks its victims"}}},
		{"survey", cmdSurvey, [][2]string{{"survey [flags]", "what batching saves on every file of an image: zero, punch, truncate"}}},
		{"site", cmdSite, [][2]string{{"site [flags] DIR", "write zrviz as a static site (WebAssembly, no server) to DIR"}}},
	}
}

// playedLines are zrviz run's lines, one per operation the engine walks (zero, punch, truncate),
// read from the ops language's registry (request.Ops): a new played operation brings its own line.
func playedLines() [][2]string {
	var out [][2]string
	for _, s := range request.Ops() {
		if !(request.Op{Kind: s.Kind}).Walks() {
			continue
		}
		syn := "run --op " + s.Kind + " [flags] PATH"
		if s.Kind == request.OpZero {
			syn = "run [--op zero] [flags] PATH"
		}
		out = append(out, [2]string{syn, s.Help + "; both modes compared"})
	}
	return out
}

// playedNames is "zeroed, punched or truncated"-like: the walked operations' kinds, from the
// registry.
func playedNames() string {
	var ks []string
	for _, s := range request.Ops() {
		if (request.Op{Kind: s.Kind}).Walks() {
			ks = append(ks, s.Kind)
		}
	}
	if len(ks) < 2 {
		return strings.Join(ks, "")
	}
	return strings.Join(ks[:len(ks)-1], ", ") + " or " + ks[len(ks)-1]
}

// commandList names the commands for the unknown-command message: "serve, inspect, … or gc".
func commandList() string {
	cs := commands()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// usage is "zrviz help": what zrviz is and a line for each form of each command.
func usage() string {
	var b strings.Builder
	b.WriteString(`zrviz shows what F2FS does to its segment information table (SIT) when a range of a file
is released — ` + playedNames() + ` — in the upstream per-block mode and the batched mode.

Usage:
`)
	w := len("zrviz")
	for _, c := range commands() {
		for _, l := range c.lines {
			w = max(w, len("zrviz "+l[0]))
		}
	}
	line := func(syn, what string) { fmt.Fprintf(&b, "  %-*s  %s\n", w, syn, what) }
	line("zrviz", "serve the embedded demo image at http://127.0.0.1:8080")
	for _, c := range commands() {
		for _, l := range c.lines {
			line("zrviz "+l[0], l[1])
		}
	}
	b.WriteString(`
Images may be raw, gzip, xz, zstd or Android sparse; the format is detected from the content.
Without --image the embedded demo image (a 256 MiB image written by Linux 6.12) is used; the image
name "demo" names it too (zrviz diff demo after.img; a file called demo is ./demo).
Run "zrviz COMMAND --help" for the flags of a command.
`)
	return b.String()
}

// newFlagSet returns a flag set for a subcommand whose --help output goes to stderr and includes the
// command's synopsis.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: zrviz %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors into usage errors. Flags may come before, between or
// after the positional arguments ("zrviz run /a --mode batched" is "zrviz run --mode batched /a"),
// and "--" ends the flags; fs.Args() is then the positional arguments in order.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}
