-- ledgerflow 0.1.0: project checked_close (id 0c000000-0000-4000-8000-000000000001, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)

-- lf_stage_1: operations input, 1; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_delete` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted` OR COALESCE(NOT `_deleted` AND (
      `amount_local` = 0
    ), FALSE) AS `_deleted`,
    CASE
      WHEN NOT `_deleted` AND (
        `amount_local` = 0
      )
      THEN :run_started_at
      ELSE `_updated_at`
    END AS `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `_lf_origin`,
    CASE
      WHEN COALESCE(NOT `_deleted` AND (
        `amount_local` = 0
      ), FALSE)
      THEN 1
      ELSE `_lf_deleted_by`
    END AS `_lf_deleted_by`
  FROM `input`
)
SELECT
  *
FROM `op_001_delete`;

-- output_002: operation 2 'Write lines' writes path out/lines/{{YYYY}}-{{MM}} (parquet)
SELECT
  `journal_id`,
  `line_number`,
  `account_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `_row_id`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

-- Checks (evaluated by the run on the rows it stages, before the commit point; `input` is the
-- rows after the period filter, input_live those of them not deleted (what a reconcile from the input
-- to an output that leaves deleted rows out counts), output_NNN the rows output NNN writes):

-- check journals_balance: balanced on output 2, tolerance 0.00; on violation: fail
SELECT
  `journal_id`,
  COUNT(*) AS `_lf_rows`,
  SUM(`amount_local`) AS `amount_local`
FROM `output_002`
GROUP BY
  `journal_id`
HAVING
  NOT COALESCE(ABS(SUM(`amount_local`)) <= 0.00, FALSE)
ORDER BY
  `journal_id`;

-- check one_row_per_line: unique on output 2; on violation: fail
SELECT
  `journal_id`,
  `line_number`,
  COUNT(*) AS `_lf_rows`,
  SUM(`amount_local`) AS `amount_local`,
  SUM(`amount_reporting`) AS `amount_reporting`
FROM `output_002`
GROUP BY
  `journal_id`,
  `line_number`
HAVING
  COUNT(*) > 1
ORDER BY
  `journal_id`,
  `line_number`;

-- check known_accounts: expect on output 2; on violation: quarantine to path out/quarantine/known_accounts (parquet)
SELECT
  *
FROM `output_002`
WHERE
  NOT COALESCE((
    NOT (
      `account_code` IS NULL
    )
  ), FALSE);

-- check some_rows: row_count on output 2, rows 1..5000000; on violation: fail
SELECT
  COUNT(*) AS `_lf_rows`
FROM `output_002`;

-- check no_null_amounts: not_null on output 2; on violation: fail
SELECT
  *
FROM `output_002`
WHERE
  `amount_local` IS NULL OR `amount_reporting` IS NULL;

-- check currencies: accepted_values on output 2; on violation: warn
SELECT
  *
FROM `output_002`
WHERE
  `currency` IS NULL OR NOT `currency` IN ('EUR', 'USD', 'GBP', 'JPY');

-- check input_lines_dated: not_null on the input; on violation: fail
SELECT
  *
FROM `input`
WHERE
  `posting_date` IS NULL;

-- check control_totals: reconcile input -> output 2 by currency, explained by 1, tolerance 0.00; on violation: warn
SELECT
  `currency`,
  COUNT(*) AS `count`,
  SUM(`amount_local`) AS `SUM(amount_local)`
FROM `input_live`
GROUP BY
  `currency`
ORDER BY
  `currency`;
SELECT
  `currency`,
  COUNT(*) AS `count`,
  SUM(`amount_local`) AS `SUM(amount_local)`
FROM `output_002`
GROUP BY
  `currency`
ORDER BY
  `currency`;

