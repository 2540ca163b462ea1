/** Previous and next buttons of a list read by pages (the operator API's `page`), with the page's number. */
export function PageButtons(props: { page: number; hasNext: boolean; onPage: (page: number) => void }) {
  const { page, hasNext, onPage } = props;
  return (
    <nav aria-label="Pages" className="pages">
      <button type="button" className="secondary" disabled={page === 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span>Page {page}</span>
      <button type="button" className="secondary" disabled={!hasNext} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}
