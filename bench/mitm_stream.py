"""mitmproxy addon for the benchmark: stream every response (mitmproxy buffers otherwise)."""


class StreamEverything:
    def responseheaders(self, flow):  # type: ignore[no-untyped-def]
        flow.response.stream = True


addons = [StreamEverything()]
