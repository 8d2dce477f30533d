package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/zrviz/zrviz/exercise"
	"github.com/zrviz/zrviz/imgio"
)

func cmdExercise(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("exercise", "exercise [--seed N] [--kind slots|file] [--image IMG] [-c] [--json]", stderr)
	seed := fs.String("seed", "", "random seed `N` (0 to 2^64-1): the same seed gives the same exercise everywhere (default: a new one each time, printed with the exercise)")
	kind := fs.String("kind", "slots", "`KIND` of problem: slots (a slot list for the sandbox) or file (a byte range of a file of the image)")
	image := imageFlag(fs)
	answers := fs.Bool("c", false, "print the answers too (computed by the engine)")
	asJSON := fs.Bool("json", false, "print JSON: {\"seed\",\"kind\",\"slots\" or \"path\",\"offset\",\"length\",\"questions\":[{\"text\",\"answer\"}]} (answers included)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{fmt.Sprintf("exercise takes no arguments (got %q); use --seed, --kind and --image", fs.Args())}
	}
	if *seed == "" {
		// A class running `zrviz exercise` each gets its own problem; the seed is printed, so any one
		// of them can be handed round again with --seed.
		*seed = strconv.FormatUint(rand.Uint64(), 10)
	}
	n, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return usageError{fmt.Sprintf("--seed %q: want a whole number from 0 to %d", *seed, uint64(1<<64-1))}
	}
	k, err := exercise.ParseKind(*kind)
	if err != nil {
		return usageError{fmt.Sprintf("--kind %q: want slots or file", *kind)}
	}
	var img *imgio.Image
	if k == exercise.File {
		if img, err = openImage(ctx, *image); err != nil {
			return err
		}
		defer img.Close()
	} else if *image != "" {
		return usageError{"--image goes with --kind file (a slot list needs no image)"}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e, err := exercise.New(n, k, img, *image)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(e)
	}
	return e.WriteText(stdout, *answers)
}
