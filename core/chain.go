package core

// WithFile returns the input for a request on another file of the same mount: in's volume-wide
// state — the Volume (valid block and node counts, current logs' positions) and the SIT with every
// change earlier requests made — with f's file: its Path, Inode and Slots.
//
// in is typically the [Result.NextInput] of the previous request; f is the reader's input for the
// next file, or, for a file an earlier request already changed, that request's NextInput (its
// slots; its volume state is stale and is not used). Several operations on different files thus
// run on one evolving state, as the kernel runs them on one mount.
func (in Input) WithFile(f Input) Input {
	f.Volume = in.Volume
	f.SIT = in.SIT
	return f
}
