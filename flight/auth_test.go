package flight

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func writeToken(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// listGraphs returns the names ListFlights gives, or its error.
func listGraphs(ctx context.Context, cl flight.Client) ([]string, error) {
	stream, err := cl.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		return nil, err
	}
	var names []string
	for {
		info, err := stream.Recv()
		if err != nil {
			if err.Error() == "EOF" {
				return names, nil
			}
			return names, err
		}
		names = append(names, info.FlightDescriptor.Path[1])
	}
}

func TestAuth(t *testing.T) {
	const token = "s3cret-token"
	ts := startServer(t, Config{AuthTokenFile: writeToken(t, token)})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := smallCase("g", "1 2 3")

	t.Run("no credentials", func(t *testing.T) {
		if _, err := listGraphs(ctx, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("ListFlights: %v", err)
		}
		if _, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"graph": "g"}`)}); codeOf(err) != "Unauthenticated" {
			t.Errorf("GetFlightInfo: %v", err)
		}
		if _, _, err := doGet(ctx, cl, `{"graph": "g"}`, memory.DefaultAllocator); codeOf(err) != "Unauthenticated" {
			t.Errorf("DoGet: %v", err)
		}
		if _, err := doAction(ctx, cl, ActionInfo, ""); codeOf(err) != "Unauthenticated" {
			t.Errorf("DoAction: %v", err)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		_, err := cl.AuthenticateBasicToken(ctx, "alice", "guess")
		if codeOf(err) != "Unauthenticated" || !strings.Contains(err.Error(), "--auth-token-file") {
			t.Errorf("got %v", err)
		}
		bad := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer guess")
		if _, err := listGraphs(bad, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("wrong bearer: %v", err)
		}
		basic := metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+token)
		if _, err := listGraphs(basic, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("basic credentials outside the handshake: %v", err)
		}
	})
	t.Run("basic then bearer", func(t *testing.T) {
		authed, err := cl.AuthenticateBasicToken(ctx, "alice", token)
		if err != nil {
			t.Fatal(err)
		}
		md, _ := metadata.FromOutgoingContext(authed)
		bearer := md.Get("authorization")
		if len(bearer) != 1 || !strings.HasPrefix(bearer[0], "Bearer ") || strings.Contains(bearer[0], token) {
			t.Errorf("bearer header %q: want a session token that is not the secret", bearer)
		}
		uploadCase(t, authed, cl, "g", c)
		names, err := listGraphs(authed, cl)
		if err != nil || strings.Join(names, ",") != "g" {
			t.Errorf("list: %v, %v", names, err)
		}
		_, recs, err := doGet(authed, cl, `{"graph": "g"}`, memory.DefaultAllocator)
		if err != nil || len(recs) == 0 {
			t.Errorf("DoGet: %v", err)
		}
		releaseAll(recs)
		if _, err := doAction(authed, cl, ActionDrop, "g"); err != nil {
			t.Errorf("drop: %v", err)
		}
	})
	t.Run("the token as bearer", func(t *testing.T) {
		direct := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		if _, err := listGraphs(direct, cl); err != nil {
			t.Errorf("got %v", err)
		}
	})
	if !strings.Contains(ts.logs.String(), "code=Unauthenticated") {
		t.Errorf("refused calls are not logged")
	}
}

func TestAuthTokenFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"missing", "", "no such file"},
		{"empty", "  \n", "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.name != "missing" {
				os.WriteFile(path, []byte(tc.content), 0o600)
			}
			_, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", AuthTokenFile: path})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pathctl test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	const token = "tls-and-token"
	ts := startServer(t, Config{TLSCert: certFile, TLSKey: keyFile, AuthTokenFile: writeToken(t, token)})
	ctx := context.Background()
	secure := dial(t, ts.addr, grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(pool, "")))
	authed, err := secure.AuthenticateBasicToken(ctx, "bob", token)
	if err != nil {
		t.Fatal(err)
	}
	uploadCase(t, authed, secure, "g", smallCase("g", "1 2 3", "2 3 1"))
	_, recs, err := doGet(authed, secure, `{"graph": "g", "layout": "matrix"}`, memory.DefaultAllocator)
	if err != nil || len(recs) != 1 || recs[0].NumRows() != 3 {
		t.Errorf("DoGet over TLS: %v", err)
	}
	releaseAll(recs)

	plain := dial(t, ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := listGraphs(short, plain); err == nil {
		t.Errorf("a plaintext client was served by a TLS server")
	}
	untrusted := dial(t, ts.addr, grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(x509.NewCertPool(), "")))
	if _, err := listGraphs(short, untrusted); codeOf(err) != "Unavailable" {
		t.Errorf("a client that does not trust the certificate: %v", err)
	}

	if _, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", TLSCert: certFile}); err == nil {
		t.Errorf("--tls-cert without --tls-key accepted")
	}
	if _, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", TLSCert: keyFile, TLSKey: certFile}); err == nil {
		t.Errorf("swapped certificate and key accepted")
	}
}

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		secured  bool
		want     string
		noteHas  string
		wantsErr bool
	}{
		{":8815", false, "127.0.0.1:8815", "loopback only", false},
		{":8815", true, ":8815", "", false},
		{"127.0.0.1:9", false, "127.0.0.1:9", "loopback only", false},
		{"localhost:9", false, "localhost:9", "loopback only", false},
		{"[::1]:9", false, "[::1]:9", "loopback only", false},
		{"127.0.0.1:9", true, "127.0.0.1:9", "", false},
		{"0.0.0.0:9", false, "0.0.0.0:9", "without authentication or TLS", false},
		{"0.0.0.0:9", true, "0.0.0.0:9", "", false},
		{"8815", false, "", "", true},
	} {
		got, note, err := listenAddr(tc.addr, tc.secured)
		if (err != nil) != tc.wantsErr || got != tc.want || !strings.Contains(note, tc.noteHas) || (tc.noteHas == "" && note != "") {
			t.Errorf("listenAddr(%q, %v) = %q, %q, %v; want %q with a note containing %q",
				tc.addr, tc.secured, got, note, err, tc.want, tc.noteHas)
		}
	}
}
