package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Evidence is what the server stores of an upload (no bytes).
type Evidence struct {
	Board            string     `json:"board"`
	Player           string     `json:"player"`
	Seq              uint64     `json:"seq"`                // 0 while attached to a pending review item
	Review           string     `json:"review,omitempty"`   // the review item, for a held submission
	Download         string     `json:"download,omitempty"` // the path to GET it
	ContentSHA256    string     `json:"content_sha256"`
	CompressedSHA256 string     `json:"compressed_sha256"`
	Bytes            int64      `json:"bytes"`
	InflatedBytes    int64      `json:"inflated_bytes"`
	Events           int        `json:"events"`
	Reused           bool       `json:"reused"`
	CreatedAt        time.Time  `json:"created_at"`
	ExpiresAt        *time.Time `json:"expires_at"`
	PromotedAt       *time.Time `json:"promoted_at"`
}

// EvidenceHashes returns the two hashes an upload declares: the SHA-256
// of the inflated bytes and of the gzip bytes as sent. gz must be one gzip
// member (the server refuses anything else).
func EvidenceHashes(gz []byte) (content, compressed string, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return "", "", fmt.Errorf("podium: evidence is not gzip: %w", err)
	}
	zr.Multistream(false)
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		return "", "", fmt.Errorf("podium: evidence does not inflate: %w", err)
	}
	c := sha256.Sum256(gz)
	return hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(c[:]), nil
}

// UploadEvidence attaches gz (one gzip member of JSON Lines) to the
// player's submission seq (0: the player's current entry). The hashes
// are computed here. Uploading the same content again is harmless
// (Reused, or the stored attachment); other content for the same
// submission is 409.
func (c *Client) UploadEvidence(ctx context.Context, board, player string, seq uint64, gz []byte) (*Evidence, error) {
	content, compressed, err := EvidenceHashes(gz)
	if err != nil {
		return nil, err
	}
	v := url.Values{"content_sha256": {content}, "compressed_sha256": {compressed}}
	if seq > 0 {
		v.Set("seq", strconv.FormatUint(seq, 10))
	}
	var out Evidence
	_, err = c.call(ctx, request{method: http.MethodPut, path: path("boards", board, "entries", player, "evidence"), query: v,
		raw: gz, rawType: "application/gzip", kind: idempotent}, &out)
	return &out, err
}

// UploadReviewEvidence attaches gz to a held submission (its review item
// id, Submitted.ID): a moderator sees it in the queue, and an approval
// moves it to the entry's submission.
func (c *Client) UploadReviewEvidence(ctx context.Context, board, player, reviewID string, gz []byte) (*Evidence, error) {
	content, compressed, err := EvidenceHashes(gz)
	if err != nil {
		return nil, err
	}
	v := url.Values{"content_sha256": {content}, "compressed_sha256": {compressed}, "review": {reviewID}}
	var out Evidence
	_, err = c.call(ctx, request{method: http.MethodPut, path: path("boards", board, "entries", player, "evidence"), query: v,
		raw: gz, rawType: "application/gzip", kind: idempotent}, &out)
	return &out, err
}

// DownloadEvidence returns the gzip bytes of a submission's evidence (seq
// 0: the player's current entry).
func (c *Client) DownloadEvidence(ctx context.Context, board, player string, seq uint64) ([]byte, error) {
	v := url.Values{}
	if seq > 0 {
		v.Set("seq", strconv.FormatUint(seq, 10))
	}
	var out []byte
	_, err := c.call(ctx, request{method: http.MethodGet, path: path("boards", board, "entries", player, "evidence"), query: v}, &out)
	return out, err
}
