package http

import (
	"strconv"
	"strings"
	"testing"
)

// submitBody is a typical single submission: two keys and a small meta.
const submitBody = `{"player":"alice-1234","keys":[41234,150],"meta":{"replay":"r-9f2","mode":"nf"}}`

// batchBody100 is a batch of 100 such submissions across a few boards.
func batchBody100() []byte {
	var sb strings.Builder
	sb.WriteString(`{"scores":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"board":"ms:expert-` + strconv.Itoa(i%4) + `","player":"player-` + strconv.Itoa(100000+i) +
			`","keys":[` + strconv.Itoa(30000+i*37) + `,` + strconv.Itoa(100+i) + `]`)
		if i%2 == 0 {
			sb.WriteString(`,"meta":{"replay":"r-` + strconv.Itoa(i) + `"}`)
		}
		sb.WriteByte('}')
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

// BenchmarkDecodeSubmit decodes the body of POST /v1/boards/{board}/scores.
func BenchmarkDecodeSubmit(b *testing.B) {
	data := []byte(submitBody)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var sb scoreBody
		if err := decodeStrict(data, &sb); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBatch100 decodes the body of POST /v1/scores with 100
// submissions.
func BenchmarkDecodeBatch100(b *testing.B) {
	data := batchBody100()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		items, errs, err := decodeBatch(data)
		if err != nil || errs != nil || len(items) != 100 {
			b.Fatal(err, errs, len(items))
		}
	}
}
