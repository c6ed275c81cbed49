#!/usr/bin/env bash
# Makes the certificates the TLS tests need, with openssl, into DIR (never into the repository:
# nothing here is committed). Idempotent: a DIR that already holds a complete set is left alone.
#
#   ca.pem / ca.key            a private test CA (the one to pass as ca=PATH)
#   server.pem / server.key    signed by it, for localhost and 127.0.0.1
#   client.pem / client.key    a client certificate signed by it (CN=bq-client)
#   wronghost.pem / .key       signed by it, but only for wrong-host.invalid
#   expired.pem / .key         signed by it, for localhost and 127.0.0.1, expired in 2021
#   other-ca.pem               a CA nobody trusts, and untrusted.pem / .key signed by it
#   server.p12, client.p12     PKCS#12 key stores (password bqtest) for the Java brokers
#   truststore.p12             the CA as a Java trust store (password bqtest), made with keytool
#
# Usage: test/support/make-certs.sh DIR
set -euo pipefail
dir=${1:?usage: make-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
[ -f .complete ] && exit 0
# Brokers start side by side (scripts/services.sh): one maker at a time, the others wait and reuse.
exec 8>"$dir/.lock"
flock -w 120 8 || { echo "make-certs: another run holds $dir/.lock" >&2; exit 1; }
[ -f .complete ] && exit 0

days=3650
subj() { echo "/O=bq tests/CN=$1"; }

openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days "$days" -subj "$(subj 'bq test CA')" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days "$days" -subj "$(subj 'untrusted CA')" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null

# sign NAME CA SAN EXTENDED_KEY_USAGE [START END]: a key and a certificate signed by CA.
sign() {
  local name=$1 ca=$2 san=$3 eku=$4 start=${5:-} end=${6:-}
  openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$(subj "$name")" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s' "$eku" "${san:+subjectAltName=$san}" > "$name.ext"
  if [ -z "$start" ]; then
    openssl x509 -req -in "$name.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -out "$name.pem" -days "$days" -extfile "$name.ext" 2>/dev/null
  else
    # openssl x509 cannot back-date a certificate; `openssl ca` can.
    mkdir -p "ca-$name"
    : > "ca-$name/index.txt"
    printf '[ca]\ndefault_ca=d\n[d]\ndatabase=ca-%s/index.txt\nnew_certs_dir=ca-%s\nserial=ca-%s/serial\ndefault_md=sha256\npolicy=p\ncopy_extensions=none\n[p]\ncommonName=supplied\n' "$name" "$name" "$name" > "ca-$name/ca.cnf"
    echo 01 > "ca-$name/serial"
    openssl ca -batch -config "ca-$name/ca.cnf" -cert "$ca.pem" -keyfile "$ca.key" -in "$name.csr" -out "$name.pem" \
      -startdate "$start" -enddate "$end" -extfile "$name.ext" -notext 2>/dev/null
  fi
  rm -f "$name.csr" "$name.ext"
}

sign server ca 'DNS:localhost,IP:127.0.0.1,IP:::1' serverAuth
sign client ca '' clientAuth
sign wronghost ca 'DNS:wrong-host.invalid' serverAuth
sign expired ca 'DNS:localhost,IP:127.0.0.1' serverAuth 20200101000000Z 20210101000000Z
sign untrusted other-ca 'DNS:localhost,IP:127.0.0.1' serverAuth

openssl pkcs12 -export -in server.pem -inkey server.key -certfile ca.pem -name server -out server.p12 -passout pass:bqtest
openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -name client -out client.p12 -passout pass:bqtest
if command -v keytool >/dev/null; then
  rm -f truststore.p12
  keytool -importcert -noprompt -alias bq-test-ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 -storepass bqtest >/dev/null 2>&1
fi
chmod 600 ./*.key
touch .complete
