import JamTestSupport

extension TestServer {
    /// A REST client for this server.
    var api: RestClient { RestClient(baseURL: baseURL) }
}
