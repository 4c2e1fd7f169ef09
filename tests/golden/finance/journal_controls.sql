-- ledgerflow 0.1.0: project journal_controls (id 0b000000-0000-4000-8000-000000000104, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)
--   ds_accounts <- dataset accounts (period, latest active version)

-- lf_stage_1: operations input, 1-2; materialised by the runner before the next statement
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
), `op_001_join_acct` AS (
  SELECT
    `code` AS `acct__code`,
    `name` AS `acct__name`,
    `type` AS `acct__type`,
    `category` AS `acct__category`,
    `is_active` AS `acct__is_active`,
    `_period` AS `acct___period`,
    COUNT(*) OVER (PARTITION BY `code`) AS `acct___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `code`,
      `name`,
      `type`,
      `category`,
      `is_active`,
      `_period`
    FROM `ds_accounts`
    WHERE
      NOT `_deleted`
      AND (
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
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `transactions`.`journal_id`,
    `transactions`.`line_number`,
    `transactions`.`posting_date`,
    `transactions`.`account_code`,
    `transactions`.`cost_center_code`,
    `transactions`.`currency`,
    `transactions`.`amount_local`,
    `transactions`.`amount_reporting`,
    `transactions`.`description`,
    `transactions`.`source_system`,
    `transactions`.`_row_id`,
    `transactions`.`_deleted`,
    CASE
      WHEN NOT `transactions`.`_deleted`
      THEN :run_started_at
      ELSE `transactions`.`_updated_at`
    END AS `_updated_at`,
    `transactions`.`_period`,
    `transactions`.`_labels`,
    `transactions`.`_source_dataset`,
    `transactions`.`_operation_seq`,
    CASE WHEN NOT `transactions`.`_deleted` THEN `acct`.`acct__type` END AS `account_type`,
    `transactions`.`_lf_origin`,
    `transactions`.`_lf_deleted_by`
  FROM `input` AS `transactions`
  LEFT JOIN `op_001_join_acct` AS `acct`
    ON `transactions`.`account_code` = `acct`.`acct__code`
    AND NOT `transactions`.`_deleted`
  WHERE
    (
      COALESCE(`acct`.`acct___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'acct\' of operation 1 matched ',
          CAST(`acct`.`acct___lf_matches` AS STRING),
          ' rows of dataset \'accounts\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`transactions`.`account_code` AS STRING))
        )
      )
    )
), `op_002_update` AS (
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
    CASE WHEN NOT `_deleted` THEN :run_started_at ELSE `_updated_at` END AS `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `account_type`,
    CASE
      WHEN NOT `_deleted`
      THEN CASE WHEN `account_type` = 'revenue' THEN -`amount_local` ELSE `amount_local` END
    END AS `amount_signed`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `op_001_update`
)
SELECT
  *
FROM `op_002_update`;

-- output_003: operation 3 'Write controlled lines' writes path out/journal_lines (parquet)
SELECT
  `journal_id`,
  `line_number`,
  `account_code`,
  `account_type`,
  `currency`,
  `amount_local`,
  `amount_signed`,
  `_row_id`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

-- Checks (evaluated by the run on the rows it stages, before the commit point; `input` is the
-- rows after the period filter, output_NNN the rows output NNN writes):

-- check journals_balance: balanced on output 3, tolerance 0.00; on violation: fail
SELECT
  `journal_id`,
  COUNT(*) AS `_lf_rows`,
  SUM(`amount_signed`) AS `amount_signed`
FROM `output_003`
GROUP BY
  `journal_id`
HAVING
  NOT COALESCE(ABS(SUM(`amount_signed`)) <= 0.00, FALSE)
ORDER BY
  `journal_id`;

-- check one_row_per_line: unique on output 3; on violation: fail
SELECT
  `journal_id`,
  `line_number`,
  COUNT(*) AS `_lf_rows`,
  SUM(`amount_local`) AS `amount_local`,
  SUM(`amount_signed`) AS `amount_signed`
FROM `output_003`
GROUP BY
  `journal_id`,
  `line_number`
HAVING
  COUNT(*) > 1
ORDER BY
  `journal_id`,
  `line_number`;

-- check known_accounts: not_null on output 3; on violation: fail
SELECT
  *
FROM `output_003`
WHERE
  `account_type` IS NULL;

-- check amounts_present: not_null on output 3; on violation: fail
SELECT
  *
FROM `output_003`
WHERE
  `amount_local` IS NULL;

-- check currencies: accepted_values on output 3; on violation: fail
SELECT
  *
FROM `output_003`
WHERE
  `currency` IS NULL OR NOT `currency` IN ('EUR', 'USD', 'GBP', 'JPY');

-- check some_lines: row_count on output 3, rows 1..; on violation: fail
SELECT
  COUNT(*) AS `_lf_rows`
FROM `output_003`;

-- check lines_numbered: expect on the input; on violation: fail
SELECT
  *
FROM `input`
WHERE
  NOT COALESCE((
    `line_number` >= 1
  ), FALSE);

