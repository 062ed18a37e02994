import CCmarkGFM
import Foundation

/// Markdown to HTML with cmark-gfm, GitHub's implementation of CommonMark and its table,
/// strikethrough, autolink, task-list and tag-filter extensions. Raw HTML in the source is
/// left out (cmark's safe default), as Hugo's goldmark does.
package enum MarkdownHTML {
    /// The extensions, registered once per process (cmark's registry is not thread-safe to fill).
    private static let registered: Bool = {
        cmark_gfm_core_extensions_ensure_registered()
        return true
    }()

    private static let extensions = ["table", "strikethrough", "autolink", "tagfilter", "tasklist"]

    /// The HTML for `markdown`.
    package static func render(_ markdown: String) -> String {
        _ = registered
        guard let parser = cmark_parser_new(CMARK_OPT_DEFAULT) else { return "" }
        defer { cmark_parser_free(parser) }
        for name in extensions {
            if let ext = cmark_find_syntax_extension(name) { cmark_parser_attach_syntax_extension(parser, ext) }
        }
        var text = markdown
        text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { cmark_parser_feed(parser, $0.baseAddress, $0.count) }
        }
        guard let document = cmark_parser_finish(parser) else { return "" }
        defer { cmark_node_free(document) }
        guard let html = cmark_render_html(document, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser)) else { return "" }
        defer { free(html) }
        return String(cString: html)
    }
}
