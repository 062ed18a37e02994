#!/bin/sh
# folio-build publish to local object stores: SeaweedFS (weed server -s3) and moto_server on
# 127.0.0.1, each publish of PUBLIC to a fresh prefix three times (the first upload), then the
# same three again (nothing changed: only the 5 mutable files go up).
#   Benchmarks/s3-publish-bench.sh [BIN_DIR (.build/release)] [PUBLIC (public)]
set -e
BIN=${1:-.build/release}
PUBLIC=${2:-public}
TMP=$(mktemp -d)
set -- $(python3 -c "
import socket
ss=[socket.socket() for _ in range(9)]
[s.bind(('127.0.0.1',0)) for s in ss]
print(' '.join(str(s.getsockname()[1]) for s in ss))")
mkdir -p "$TMP/weed"
timeout -k 5 300 weed server -dir="$TMP/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port=$1 -master.port.grpc=$2 \
  -volume.port=$3 -volume.port.grpc=$4 -filer -filer.port=$5 -filer.port.grpc=$6 -s3 -s3.port=$7 -s3.port.grpc=$8 \
  -s3.port.iceberg=0 -s3.port.lance=0 -master.volumeSizeLimitMB=64 >"$TMP/weed.log" 2>&1 &
WEED=$!
timeout -k 5 300 moto_server -H 127.0.0.1 -p $9 >"$TMP/moto.log" 2>&1 &
MOTO=$!
trap 'kill -KILL -$WEED -$MOTO 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 8
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
for store in "seaweedfs $7" "moto $9"; do
  set -- $store
  export AWS_ENDPOINT_URL=http://127.0.0.1:$2
  for try in 1 2 3 4 5; do
    python3 -c "import boto3; boto3.client('s3', endpoint_url='$AWS_ENDPOINT_URL').create_bucket(Bucket='bench')" 2>/dev/null && break
    sleep 1
  done
  for run in first unchanged; do
    for i in 1 2 3; do
      "$BIN/folio-build" publish -q "$PUBLIC" s3://bench/p$i | sed "s/^/$1 $run: /"
    done
  done
done
