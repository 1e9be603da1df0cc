# Sourced by a bash script (scripts/test.sh): start a Docker engine if none answers, and on the
# script's exit stop it only if this script started it. An engine that was already running (e.g.
# started by scripts/quickstart.sh, whose pid file is the same) is left alone.
_automemo_started=$(mktemp)
_automemo_stop_own_engine() {
    if [ -s "$_automemo_started" ]; then
        bash scripts/stop-dockerd.sh
    fi
    rm -f "$_automemo_started"
}
# Stop it whatever happens: a background dockerd left holding CI's output pipe would keep the
# CI run open until its time limit.
trap _automemo_stop_own_engine EXIT
DOCKERD_STARTED_FILE=$_automemo_started bash scripts/start-dockerd.sh
