package io.ductor.test.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The code blocks of a documentation file between {@code <!-- <marker>:begin -->} and
 * {@code <!-- <marker>:end -->}, and the check that a Java block is the code of a source
 * file the tests compile and run: the page shows what the test runs, so neither drifts.
 */
public final class DocSnippets {

	private static final Pattern BLOCK = Pattern.compile("```(\\w+)\\n(.*?)```", Pattern.DOTALL);

	private DocSnippets() {
	}

	/**
	 * The code blocks between the markers, in order.
	 * @param document the Markdown file
	 * @param marker the marker's name
	 * @return each block's language and text
	 */
	public static List<Snippet> between(Path document, String marker) {
		String page;
		try {
			page = Files.readString(document);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		int begin = page.indexOf("<!-- " + marker + ":begin -->");
		int end = page.indexOf("<!-- " + marker + ":end -->");
		if (begin < 0 || end < begin) {
			throw new IllegalStateException(
					document + " has no section <!-- " + marker + ":begin --> … <!-- " + marker + ":end -->");
		}
		List<Snippet> snippets = new ArrayList<>();
		Matcher block = BLOCK.matcher(page.substring(begin, end));
		while (block.find()) {
			snippets.add(new Snippet(block.group(1), block.group(2)));
		}
		return snippets;
	}

	/**
	 * Fails unless {@code source} holds the code of {@code snippet}: the same tokens in
	 * the same order once comments, blank space and {@code this.} (which the source's
	 * style adds) are left out.
	 * @param snippet a Java block of the documentation
	 * @param source the Java source file that runs it
	 */
	public static void assertRuns(Snippet snippet, Path source) {
		String code;
		try {
			code = Files.readString(source);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		String expected = normalize(snippet.text());
		if (!normalize(code).contains(expected)) {
			throw new AssertionError("The " + snippet.language() + " block of the documentation is not the code of "
					+ source + " any more; change one so that they agree again:\n" + snippet.text());
		}
	}

	/** Code without comments, whitespace and {@code this.}. */
	static String normalize(String code) {
		String withoutComments = code.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
		return withoutComments.replace("this.", "").replaceAll("\\s+", "");
	}

	/**
	 * One code block.
	 *
	 * @param language the block's language ({@code java}, {@code yaml}, …)
	 * @param text its text
	 */
	public record Snippet(String language, String text) {

		@Override
		public String toString() {
			return this.language + ": " + this.text.strip().lines().findFirst().orElse("");
		}

	}

}
