package reliability

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/source"
)

// Outcome is what one corrupt image did.
type Outcome struct {
	OpenErr   error // nil when the image opened
	Files     int   // files listed
	Runs      int   // engine runs (file × mode)
	Errnos    map[string]int
	TypedErrs map[string]int // "NotF2FS", "Format:<struct>", "Unsupported:<feature>", "NotExist", "Input"
}

// Violation is a broken promise: an untyped error, a panic, a FormatError
// whose offset lies outside the image.
type Violation struct {
	Stage string // "open", "files", "file", "extents", "dnodes", "segments", "input", "simulate"
	Kind  string // "panic", "untyped", "offset", "errno"
	Err   string
	Stack string
}

func (v *Violation) Error() string { return fmt.Sprintf("%s: %s: %s", v.Stage, v.Kind, v.Err) }

// Limits bounds how much of a corrupt image is exercised: a hostile image
// can list millions of names, and the point is the parser, not the count.
type Limits struct {
	MaxFiles   int   // files whose nodes are walked (and run through the engine)
	MaxRunLen  int64 // bytes of each file the engine zeroes (0 = the whole file)
	EngineRuns bool
	// EngineMaxSize skips the engine for files whose i_size is larger
	// (0 = no limit): the engine's result covers every page up to i_size,
	// so a 9 GiB sparse file costs 100 ms a run, too much for 10,000
	// images. Huge sizes have their own tests.
	EngineMaxSize int64
}

// knownErrnos are the kernel errno names core may report.
var knownErrnos = map[string]bool{"": true, "EINVAL": true, "EOPNOTSUPP": true, "EPERM": true, "EISDIR": true,
	"ELOOP": true, "ENODEV": true, "EFBIG": true, "EIO": true, "ENOSPC": true, "EFSCORRUPTED": true}

// classify says what kind of typed error err is, or returns a violation.
// A FormatError must locate the damage inside the volume: bound is the
// larger of the image size and the size the superblock declares.
func classify(stage string, err error, bound int64) (string, *Violation) {
	var fe *imgio.FormatError
	var ue *imgio.UnsupportedError
	var se *core.SourceError
	switch {
	case errors.Is(err, imgio.ErrNotF2FS):
		return "NotF2FS", nil
	case errors.As(err, &fe):
		if fe.Off < 0 || fe.Off >= bound {
			return "", &Violation{Stage: stage, Kind: "offset", Err: err.Error()}
		}
		return "Format:" + fe.Struct, nil
	case errors.As(err, &ue):
		return "Unsupported:" + ue.Feature, nil
	case errors.Is(err, fs.ErrNotExist):
		return "NotExist", nil
	case errors.Is(err, imgio.ErrNameTooLong):
		// A listing left out a path longer than PATH_MAX.
		return "NameTooLong", nil
	case errors.Is(err, core.ErrInput):
		return "Input", nil
	case errors.Is(err, core.ErrUnmodelled):
		// A refusal naming what the model does not know (refuse rather than guess).
		return "Unmodelled", nil
	case errors.As(err, &se):
		return "", &Violation{Stage: stage, Kind: "untyped", Err: "source error without a typed cause: " + err.Error()}
	}
	return "", &Violation{Stage: stage, Kind: "untyped", Err: fmt.Sprintf("%T: %v", err, err)}
}

// Exercise opens r as an image and walks everything a user can reach:
// the volume, the file list, every file's inode, extents and dnodes, the
// SIT, and the engine in both modes over each file. It returns the first
// violation; a panic anywhere is caught and returned as one with its
// stack.
func Exercise(r io.ReaderAt, size int64, lim Limits) (out Outcome, v *Violation) {
	stage := "open"
	defer func() {
		if p := recover(); p != nil {
			v = &Violation{Stage: stage, Kind: "panic", Err: fmt.Sprint(p), Stack: string(debug.Stack())}
		}
	}()
	out.TypedErrs = map[string]int{}
	out.Errnos = map[string]int{}
	bound := size
	note := func(st string, err error) *Violation {
		k, viol := classify(st, err, bound)
		if viol == nil {
			out.TypedErrs[k]++
		}
		return viol
	}
	img, err := imgio.NewImage(r, size)
	if err != nil {
		out.OpenErr = err
		return out, note("open", err)
	}
	defer img.Close()
	vol := img.Volume()
	if declared := int64(vol.BlockCount) * int64(max(vol.BlockSize, 1)); declared > bound {
		bound = declared
	}
	if vol.MaxBlkaddr > 0 {
		bound = max(bound, int64(vol.MaxBlkaddr)*int64(max(vol.BlockSize, 1)))
	}

	stage = "segments"
	if _, err := img.Segments(); err != nil {
		if viol := note(stage, err); viol != nil {
			return out, viol
		}
	}
	stage = "files"
	ents, err := img.Files()
	if err != nil {
		if viol := note(stage, err); viol != nil {
			return out, viol
		}
	}
	out.Files = len(ents)
	inos := []uint32{vol.RootIno}
	for i, e := range ents {
		if i >= lim.MaxFiles {
			break
		}
		inos = append(inos, e.Ino)
	}
	for i, ino := range inos {
		stage = "file"
		f, err := img.File(ino)
		if err != nil {
			if viol := note(stage, err); viol != nil {
				return out, viol
			}
			continue
		}
		if i > 0 {
			// Through Lookup as the CLI and the web do.
			stage = "lookup"
			if lf, err := img.Lookup(ents[i-1].Path); err != nil {
				if viol := note(stage, err); viol != nil {
					return out, viol
				}
			} else {
				f = lf
			}
		}
		stage = "extents"
		if _, err := f.Extents(); err != nil {
			if viol := note(stage, err); viol != nil {
				return out, viol
			}
		}
		stage = "dnodes"
		if _, err := f.Dnodes(); err != nil {
			if viol := note(stage, err); viol != nil {
				return out, viol
			}
		}
		if f.Inode().Inline&0x02 != 0 {
			stage = "inline"
			if _, err := f.ReadInline(); err != nil {
				if viol := note(stage, err); viol != nil {
					return out, viol
				}
			}
		}
		if !lim.EngineRuns || lim.EngineMaxSize > 0 && f.Inode().Size > lim.EngineMaxSize {
			continue
		}
		stage = "input"
		in, err := source.FileInput(img, f)
		if err != nil {
			if viol := note(stage, err); viol != nil {
				return out, viol
			}
			continue
		}
		length := max(f.Inode().Size, 1)
		if lim.MaxRunLen > 0 {
			length = min(length, lim.MaxRunLen)
		}
		// A zero, a punch of the same range and a truncate to 0 (the node walk: every node of the
		// file read for its address), in both modes.
		for _, req := range []core.Request{{Length: length}, {Op: core.OpPunch, Length: length}, {Op: core.OpTruncate}} {
			for _, m := range core.Modes {
				stage = "simulate/" + req.Op.String() + "/" + m.String()
				res, err := core.Simulate(in, req, m)
				out.Runs++
				if err != nil {
					if viol := note(stage, err); viol != nil {
						return out, viol
					}
					continue
				}
				if !knownErrnos[res.Errno] {
					return out, &Violation{Stage: stage, Kind: "errno", Err: "unknown errno " + res.Errno}
				}
				out.Errnos[res.Errno]++
			}
		}
	}
	return out, nil
}
