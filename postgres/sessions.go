package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultApplicationName is the application_name of podium's connections
// when the connection string (or PGAPPNAME) does not set one.
const DefaultApplicationName = "podium"

// ApplicationName returns the application_name that Open gives the
// connections of dsn: the one dsn or PGAPPNAME sets, else
// DefaultApplicationName. The operations commands look for nodes by it.
func ApplicationName(dsn string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	if n := cfg.RuntimeParams["application_name"]; n != "" {
		return n, nil
	}
	return DefaultApplicationName, nil
}

// Session is another connection to the database, as pg_stat_activity
// shows it.
type Session struct {
	PID     int
	Client  string    // address:port, "" for a Unix socket (or when not visible to this user)
	Started time.Time // zero when not visible to this user
}

// Sessions lists the connections to the current database, other than the
// one that asks, whose application_name is name: for an operations command
// whose own connections carry another name, the podium nodes that use the
// database. pg_stat_activity knows databases, not schemas (nodes of another
// schema count too), and shows other users' sessions without their address
// and start unless this user has pg_read_all_stats.
func (s *Store) Sessions(ctx context.Context, name string) ([]Session, error) {
	rows, err := s.pool.Query(ctx, `SELECT pid, coalesce(host(client_addr) || ':' || client_port, ''), backend_start
		FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()
		ORDER BY backend_start, pid`, name)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var (
			ss      Session
			started *time.Time
		)
		if err := rows.Scan(&ss.PID, &ss.Client, &started); err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		if started != nil {
			ss.Started = *started
		}
		out = append(out, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	return out, nil
}
