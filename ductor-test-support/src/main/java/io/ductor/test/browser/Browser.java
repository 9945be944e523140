package io.ductor.test.browser;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TimeoutException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless Chromium driven by Selenium through Debian's {@code chromedriver}:
 * the one way pages are tested. {@link #launch(int, int)} skips the test, with a message
 * that says what to install, when the driver is missing; it never downloads a browser or
 * a driver. Each browser has a fresh profile, deleted on {@link #close()}.
 */
public final class Browser implements AutoCloseable {

	/** Where Debian's {@code chromium-driver} puts the driver. */
	public static final Path DRIVER = Path.of("/usr/bin/chromedriver");

	/** Debian's Chromium binary (not the {@code /usr/bin/chromium} launcher script). */
	public static final Path CHROMIUM = Path.of("/usr/lib/chromium/chromium");

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private final ChromeDriver driver;

	private final Path profile;

	private Browser(ChromeDriver driver, Path profile) {
		this.driver = driver;
		this.profile = profile;
	}

	/**
	 * Starts a headless Chromium with a window of the given size, or skips the calling
	 * test when Debian's {@code chromium} and {@code chromium-driver} are not installed.
	 * @param width the window width in pixels
	 * @param height the window height in pixels
	 * @return the browser
	 */
	public static Browser launch(int width, int height) {
		Assumptions.assumeTrue(Files.isExecutable(DRIVER) && Files.isExecutable(CHROMIUM),
				"Page tests need Debian's chromium and chromium-driver (" + DRIVER + ", " + CHROMIUM
						+ "): apt-get install -y chromium chromium-driver");
		Path profile;
		try {
			profile = Files.createTempDirectory("ductor-chromium-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		ChromeOptions options = new ChromeOptions();
		options.setBinary(CHROMIUM.toFile());
		options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--disable-dev-shm-usage", "--user-data-dir=" + profile, "--window-size=" + width + "," + height);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
			.usingAnyFreePort()
			.build();
		ChromeDriver driver = new ChromeDriver(service, options);
		driver.manage().timeouts().scriptTimeout(PATIENCE);
		return new Browser(driver, profile);
	}

	/**
	 * @return the Selenium driver, for what this class does not offer
	 */
	public ChromeDriver driver() {
		return this.driver;
	}

	/**
	 * @param url the page to open; returns once it has loaded
	 */
	public void open(String url) {
		this.driver.get(url);
	}

	/**
	 * @param expression a JavaScript expression
	 * @return its value (strings, numbers as {@code Long} or {@code Double}, booleans, or
	 * {@code null})
	 */
	public Object evaluate(String expression) {
		return ((JavascriptExecutor) this.driver).executeScript("return (" + expression + ");");
	}

	/**
	 * @param css the element @return the element, once it is in the page
	 */
	public WebElement find(String css) {
		return await(() -> this.driver.findElements(By.cssSelector(css)).stream().findFirst().orElse(null),
				"an element matching " + css);
	}

	/**
	 * @param css the element @return its text, once it is in the page
	 */
	public String text(String css) {
		return find(css).getAttribute("textContent");
	}

	/**
	 * Replaces the value of an input, or chooses the option with this value of a select.
	 */
	public void fill(String css, String text) {
		WebElement input = find(css);
		if ("select".equalsIgnoreCase(input.getTagName())) {
			new Select(input).selectByValue(text);
			return;
		}
		input.clear();
		input.sendKeys(text);
	}

	/** Clicks an element once it is in the page. */
	public void click(String css) {
		// a page that renders again between the find and the click (a poll's refresh) is
		// searched again
		await(() -> {
			WebElement element = this.driver.findElements(By.cssSelector(css)).stream().findFirst().orElse(null);
			if (element == null) {
				return null;
			}
			try {
				element.click();
				return true;
			}
			catch (StaleElementReferenceException ex) {
				return null;
			}
		}, "a clickable element matching " + css);
	}

	/**
	 * Waits until {@code value} gives something other than {@code null} or {@code false}.
	 * @param value what to wait for
	 * @param what what it is, for the failure message
	 * @param <T> its type
	 * @return the value
	 */
	public <T> T await(Supplier<T> value, String what) {
		try {
			return new WebDriverWait(this.driver, PATIENCE).until((driver) -> {
				T found = value.get();
				return (Boolean.FALSE.equals(found)) ? null : found;
			});
		}
		catch (TimeoutException ex) {
			throw new AssertionError(
					"Waited " + PATIENCE.toSeconds() + " s for " + what + " on " + this.driver.getCurrentUrl(), ex);
		}
	}

	/** Saves what the window shows as a PNG file, creating its directory. */
	public void screenshot(Path file) {
		try {
			Files.createDirectories(file.toAbsolutePath().getParent());
			Files.copy(this.driver.getScreenshotAs(OutputType.FILE).toPath(), file,
					StandardCopyOption.REPLACE_EXISTING);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	public void close() {
		try {
			this.driver.quit();
		}
		finally {
			try (Stream<Path> files = Files.walk(this.profile)) {
				files.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
			}
			catch (IOException ex) {
				// a profile left in the temporary directory does no harm
			}
		}
	}

}
