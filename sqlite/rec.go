package sqlite

import (
	"encoding/binary"
	"errors"

	"github.com/podiumhq/podium"
)

// appendRec appends the entries.rec encoding of e: at, seq, keys as
// varints.
func appendRec(b []byte, e *podium.Entry) []byte {
	b = binary.AppendVarint(b, podium.Millis(e.At))
	b = binary.AppendUvarint(b, e.Seq)
	for _, k := range e.Keys {
		b = binary.AppendVarint(b, k)
	}
	return b
}

var errBadRec = errors.New("malformed entries.rec")

// appendSubRec packs a log row's kind, at and keys.
func appendSubRec(b []byte, sub *podium.Submission) []byte {
	b = binary.AppendUvarint(b, uint64(sub.Kind))
	b = binary.AppendVarint(b, podium.Millis(sub.At))
	for _, k := range sub.Keys {
		b = binary.AppendVarint(b, k)
	}
	return b
}

var errBadSubRec = errors.New("malformed submissions.rec")

// decodeSubRec fills sub's Kind, At and Keys from rec, reusing sub.Keys.
func decodeSubRec(rec []byte, sub *podium.Submission) error {
	kind, n := binary.Uvarint(rec)
	if n <= 0 || kind > uint64(podium.KindRestore) {
		return errBadSubRec
	}
	rec = rec[n:]
	at, n := binary.Varint(rec)
	if n <= 0 {
		return errBadSubRec
	}
	rec = rec[n:]
	sub.Kind, sub.At = podium.Kind(kind), podium.FromMillis(at)
	sub.Keys = sub.Keys[:0]
	for len(rec) > 0 {
		k, n := binary.Varint(rec)
		if n <= 0 || len(sub.Keys) == podium.MaxKeys {
			return errBadSubRec
		}
		sub.Keys = append(sub.Keys, k)
		rec = rec[n:]
	}
	return nil
}

// decodeRec fills e's At, Seq and Keys from rec, reusing e.Keys.
func decodeRec(rec []byte, e *podium.Entry) error {
	at, n := binary.Varint(rec)
	if n <= 0 {
		return errBadRec
	}
	rec = rec[n:]
	seq, n := binary.Uvarint(rec)
	if n <= 0 {
		return errBadRec
	}
	rec = rec[n:]
	e.At, e.Seq = podium.FromMillis(at), seq
	e.Keys = e.Keys[:0]
	for len(rec) > 0 {
		k, n := binary.Varint(rec)
		if n <= 0 || len(e.Keys) == podium.MaxKeys {
			return errBadRec
		}
		e.Keys = append(e.Keys, k)
		rec = rec[n:]
	}
	if len(e.Keys) == 0 {
		return errBadRec
	}
	return nil
}
