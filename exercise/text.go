package exercise

import (
	"fmt"
	"io"
	"strings"

	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/sandbox"
)

// WriteText prints the exercise as OSTEP's simulators do: the problem, the questions and, when
// answers is set (their -c), each answer under its question.
func (e *Exercise) WriteText(w io.Writer, answers bool) error {
	var b strings.Builder
	img, flag := "the demo image", ""
	if e.Image != "" {
		img, flag = e.Image, " --image "+e.Image
	}
	switch e.Kind {
	case Slots:
		fmt.Fprintf(&b, "zrviz exercise --seed %d --kind slots\n\n", e.Seed)
		fmt.Fprintf(&b, "A file's data slots are zeroed with fallocate(FALLOC_FL_ZERO_RANGE) over exactly these slots:\n\n")
		fmt.Fprintf(&b, "    %s\n\n", e.Slots)
		fmt.Fprintf(&b, "Sandbox rules: the main area starts at block %d (a lower address fails the bounds check);\n", sandbox.MainBlkaddr)
		fmt.Fprintf(&b, "every listed address has its SIT bit set, once; segments hold %d blocks and only the listed\n", sandbox.BlocksPerSeg)
		fmt.Fprintf(&b, "ones are valid; NEW is a reserved block, NULL a hole; | starts a new dnode chunk; the inode holds\n")
		fmt.Fprintf(&b, "%d slots and a direct node %d, so without | a chunk ends after slot %d.\n", sandbox.AddrsPerInode, sandbox.AddrsPerBlock, sandbox.AddrsPerInode-1)
	case File:
		fmt.Fprintf(&b, "zrviz exercise --seed %d --kind file%s\n\n", e.Seed, flag)
		fmt.Fprintf(&b, "In %s, the file %s is zeroed with fallocate(FALLOC_FL_ZERO_RANGE, offset %s, length %s):\n",
			img, e.Path, units.Group(e.Offset), units.Group(e.Length))
		fmt.Fprintf(&b, "file blocks %s to %s. Look at its slots with: zrviz map%s %s\n",
			units.Group(e.Offset/f2fs.BlockSize), units.Group((e.Offset+e.Length)/f2fs.BlockSize-1), flag, e.Path)
	}
	b.WriteString("\nQuestions:\n")
	for i, q := range e.Questions {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, q.Text)
		if answers {
			fmt.Fprintf(&b, "     Answer: %s\n", q.Answer)
		}
	}
	if !answers {
		b.WriteString("\nRun with -c to see the answers (computed by the engine).\n")
	}
	switch e.Kind {
	case Slots:
		fmt.Fprintf(&b, "\nWatch it: zrviz sandbox '%s'\n", e.Slots)
	case File:
		fmt.Fprintf(&b, "\nWatch it: zrviz run%s --offset %d --length %d %s\n", flag, e.Offset, e.Length, e.Path)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
